package checker

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"sluice/jepsen/history"
)

// groupOwnership finds partitions that one generation of one group gave to
// two or more members, according to ok subscribe completions.
func (a *analysis) groupOwnership() []Finding {
	type claim struct {
		group      string
		generation int32
		partition  history.TopicPartition
		member     string
		op         int
	}
	var claims []claim
	for _, operation := range a.operations {
		if operation.F != history.FuncSubscribe || operation.Type != history.OK {
			continue
		}
		completion := &a.ops[operation.Complete]
		if completion.Group == "" {
			continue
		}
		for _, tp := range completion.Assigned {
			claims = append(claims, claim{
				group: completion.Group, generation: completion.Generation, partition: tp,
				member: completion.MemberID, op: operation.Complete,
			})
		}
	}
	slices.SortFunc(claims, func(x, y claim) int {
		return cmp.Or(strings.Compare(x.group, y.group), cmp.Compare(x.generation, y.generation),
			x.partition.Compare(y.partition), strings.Compare(x.member, y.member), cmp.Compare(x.op, y.op))
	})
	var findings []Finding
	for start := 0; start < len(claims); {
		end := start + 1
		for end < len(claims) && claims[end].group == claims[start].group &&
			claims[end].generation == claims[start].generation && claims[end].partition == claims[start].partition {
			end++
		}
		var members []string
		var firstOps, ops []int
		for i, c := range claims[start:end] {
			ops = append(ops, c.op)
			if i == 0 || c.member != claims[start+i-1].member {
				members = append(members, fmt.Sprintf("%q (op %d)", c.member, c.op))
				firstOps = append(firstOps, c.op)
			}
		}
		if len(members) > 1 {
			c := claims[start]
			findings = append(findings, Finding{
				Anomaly:   GroupOwnership,
				Status:    Failure,
				Partition: c.partition,
				Group:     c.group,
				Ops:       opListPreferring(firstOps, ops),
				Detail: fmt.Sprintf("generation %d of group %q assigned %s to %d members: %s",
					c.generation, c.group, c.partition, len(members), strings.Join(members, ", ")),
			})
		}
		start = end
	}
	return findings
}
