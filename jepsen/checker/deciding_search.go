package checker

import (
	"fmt"
	"slices"

	"github.com/anishathalye/porcupine"
)

// The search that gives a verdict. The quick search (quick_search.go)
// finds the linearization of nearly every history that has one; when it
// gives up, decide searches everything, as porcupine would: Wing and
// Gong's search with Lowe's memo of the (linearized set, state) pairs
// already tried, so that reaching one again by another order is cut
// short, and with the quick search's pruning of eager operations,
// which porcupine cannot do. Its budget is counted in steps and bytes,
// never in wall-clock time, so a history gets the same verdict on any
// machine under any load: the simulator hashes verdicts into its
// traces, and a seed must replay the same on a laptop and in CI.
// Porcupine only draws a visualization (visualize.go).

// SearchStepsDefault is each search's budget of steps when Options leaves
// it zero (2^24): a step is one candidate tried. About a second or two of one
// core: the cluster workload's histories that need the deciding search
// at all (those that fail, mostly) take far fewer.
const SearchStepsDefault = 1 << 24

// searchMemoBytesDefault bounds the memory a search's memo may take
// under the default steps, and grows with them (searchBudget): counted
// as memoEntryBytes per entry, not measured, so that the bound is the
// same everywhere. Past it the search is out of budget, as past its
// steps.
const searchMemoBytesDefault = 256 << 20

// searchBudget is what a deciding search may spend: steps, and memory
// for its memo.
type searchBudget struct {
	steps     int
	memoBytes int64
}

// budgetOf is the budget of a search given steps: the memory grows with
// the steps past the default, so that more steps are not spent in vain
// once the memo is full.
func budgetOf(steps int) searchBudget {
	memo := int64(searchMemoBytesDefault)
	if steps > SearchStepsDefault {
		memo = int64(float64(memo) * float64(steps) / SearchStepsDefault)
	}
	return searchBudget{steps: steps, memoBytes: memo}
}

// memoEntryBytes is what one memo entry is counted to take besides its
// set's words: the entry, the state it holds (for the log model, a boxed
// partitionState and the logState version it appended), a share of the
// map. Measured: a search of 15 log operations that filled its memo had
// 985 MiB in use for 3.7 million entries, 266 bytes each.
const memoEntryBytes = 256

// decision is a deciding search's verdict: Ok, Illegal, or Unknown when
// its budget ran out. For Illegal, longest is the longest linearizable
// prefix it found, as operation indexes, and why says nothing; for
// Unknown, why says which budget ran out.
type decision struct {
	result  porcupine.CheckResult
	longest []int32
	why     string
}

// memoEntry is one (linearized set, state) pair the search has tried.
type memoEntry struct {
	set   []uint64
	state any
}

// decide searches s's operations for a linearization within budget.
func (s *search) decide(budget searchBudget) decision {
	n := len(s.operations)
	if n == 0 {
		return decision{result: porcupine.Ok}
	}
	if s.model.Step == nil {
		panic("checker: a deciding search needs a model with Step")
	}
	equal := s.model.Equal
	if equal == nil {
		equal = func(x, y any) bool { return x == y }
	}
	hashOf := s.model.Hash
	if hashOf == nil {
		hashOf = func(any) uint64 { return 0 }
	}
	l := newCallList(s.operations)
	set := make([]uint64, (n+63)/64)
	var setHash uint64 // the XOR of setKey of every operation in set
	flip := func(operation int32) {
		set[operation/64] ^= 1 << (operation % 64)
		setHash ^= setKey(operation)
	}
	memo := map[uint64][]memoEntry{}
	entryBytes := int64(8*len(set) + memoEntryBytes)
	var memoBytes int64
	tried := func(key uint64, state any) bool {
		for _, entry := range memo[key] {
			if slices.Equal(entry.set, set) && equal(entry.state, state) {
				return true
			}
		}
		return false
	}

	var stack []linearized
	var longest []int32
	state := s.model.Init()
	steps := budget.steps
	for node := l.first(); !l.empty(); {
		if steps--; steps < 0 {
			return decision{result: porcupine.Unknown, why: "steps"}
		}
		e := l.entries[node-1]
		if !e.isReturn {
			operation := &s.operations[e.operation]
			eager := isEager(operation.Input)
			ok, after := s.model.Step(state, operation.Input, operation.Output)
			if ok {
				flip(e.operation)
				key := setHash ^ hashOf(after)
				if !tried(key, after) {
					if memoBytes += entryBytes; memoBytes > budget.memoBytes {
						return decision{result: porcupine.Unknown, why: "memory"}
					}
					memo[key] = append(memo[key], memoEntry{set: slices.Clone(set), state: after})
					stack = append(stack, linearized{call: node, state: state, eager: eager})
					if len(stack) > len(longest) {
						longest = longest[:0]
						for _, done := range stack {
							longest = append(longest, l.entries[done.call-1].operation)
						}
					}
					state = after
					l.lift(node)
					node = l.first()
					continue
				}
				flip(e.operation)
			}
			if !eager {
				node = l.next[node]
				continue
			}
			// An eager candidate whose pair was tried already: it would
			// go next if anything could (eagerInput), so nothing can.
		}
		// A return still in the list, so no later call may go before its
		// operation, and no candidate fits; or an eager candidate tried
		// already. Take the last operation linearized back and try what
		// follows it.
		var top linearized
		if stack, top = l.takeBack(stack, flip); top.call < 0 {
			return decision{result: porcupine.Illegal, longest: longest}
		}
		state = top.state
		node = l.next[top.call]
	}
	return decision{result: porcupine.Ok}
}

// setKey is an operation's key in the hash of a linearized set: a
// fixed pseudo-random word per index (splitmix64), so that sets that
// differ rarely share a hash.
func setKey(operation int32) uint64 {
	z := uint64(operation) + 0x9e3779b97f4a7c15
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// describeBudget says what a search that ran out ran out of.
func describeBudget(d decision, budget searchBudget, operations int) string {
	if d.why == "memory" {
		return fmt.Sprintf("the search ran out of its %d MiB of memory on %d operations", budget.memoBytes>>20, operations)
	}
	return fmt.Sprintf("the search ran out of its %d steps on %d operations", budget.steps, operations)
}
