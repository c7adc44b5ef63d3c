package checker

import (
	"cmp"
	"fmt"
	"slices"

	"sluice/jepsen/history"
)

// completedGeneration is one ok subscribe: a generation of a group whose
// assignment a member received at op complete.
type completedGeneration struct {
	complete   int
	generation int32
}

// staleGenerationCommits finds ok commits whose generation is older than
// the newest generation their group had completed before the commit was
// invoked. Per group, the ok subscribes are sorted by completion and
// folded into the newest generation completed so far; each ok commit
// looks up what was newest just before its invoke.
func (a *analysis) staleGenerationCommits() []Finding {
	completed := map[string][]completedGeneration{}
	for _, operation := range a.operations {
		if operation.F != history.FuncSubscribe || operation.Type != history.OK {
			continue
		}
		completion := &a.ops[operation.Complete]
		if completion.Group == "" {
			continue
		}
		completed[completion.Group] = append(completed[completion.Group],
			completedGeneration{complete: operation.Complete, generation: completion.Generation})
	}
	newest := map[string][]completedGeneration{}
	for group, list := range completed { // order-independent: each group is folded on its own
		slices.SortFunc(list, func(x, y completedGeneration) int { return cmp.Compare(x.complete, y.complete) })
		// Keep only the subscribes that raised the newest generation:
		// a list ascending in both completion and generation.
		var raised []completedGeneration
		for _, c := range list {
			if n := len(raised); n == 0 || c.generation > raised[n-1].generation {
				raised = append(raised, c)
			}
		}
		newest[group] = raised
	}
	var findings []Finding
	for _, operation := range a.operations {
		if operation.F != history.FuncCommit || operation.Type != history.OK {
			continue
		}
		for _, commit := range a.ops[operation.Invoke].Commits {
			if commit.Generation <= 0 {
				continue
			}
			raised := newest[commit.Group]
			// The last generation raised before the commit's invoke.
			at, _ := slices.BinarySearchFunc(raised, operation.Invoke, func(c completedGeneration, invoke int) int {
				return cmp.Compare(c.complete, invoke)
			})
			if at == 0 || raised[at-1].generation <= commit.Generation {
				continue
			}
			// The first subscribe that made the commit's generation
			// stale: the earliest one newer than it.
			first, _ := slices.BinarySearchFunc(raised[:at], commit.Generation+1, func(c completedGeneration, generation int32) int {
				return cmp.Compare(c.generation, generation)
			})
			witness := raised[first]
			findings = append(findings, Finding{
				Anomaly:   StaleGenerationCommit,
				Status:    Failure,
				Partition: commit.Partition,
				Group:     commit.Group,
				Ops:       opList(witness.complete, operation.Complete),
				Detail: fmt.Sprintf("commit of offset %d with generation %d (op %d) was acknowledged, though generation %d of group %q had completed at op %d, before the commit began",
					commit.Offset, commit.Generation, operation.Complete, witness.generation, commit.Group, witness.complete),
			})
		}
	}
	return findings
}
