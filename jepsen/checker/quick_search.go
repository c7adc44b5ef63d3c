package checker

import (
	"cmp"
	"slices"

	"github.com/anishathalye/porcupine"
)

// Nearly every search of a run that passes succeeds, and its first tries
// find the linearization. The deciding search (deciding_search.go), built
// for the general case, pays for it all the same: at every operation it
// linearizes, a copy of the set of operations linearized so far and an
// entry in its memo, to remember what it tried in case it has to
// backtrack. linearizes runs the same search first (Wing and Gong's),
// without that memory and within a small budget of steps. When it finds
// a linearization, the history is linearizable: that is the verdict.
// When it finds none (the history is not linearizable, or needs more
// backtracking than the budget allows), the deciding search decides.

// quickSearchSteps bounds linearizes: steps per operation, and a floor.
// A search that succeeds at its first tries takes two steps an operation,
// and one more per candidate that does not fit: in the cluster workload's
// runs, all but a few in a thousand take less than three an operation.
// One that fails (a history that is not linearizable, a permitted loss
// of writes for one) searches on until it runs out, and the deciding
// search then searches again: the budget is what it wastes.
const (
	quickSearchStepsPerOperation = 8
	quickSearchStepsMin          = 256
)

// quickEntry is a call or a return of an operation, in time order; the
// entries form a doubly linked list of those not yet linearized
// (callList).
type quickEntry struct {
	time      int64
	operation int32
	isReturn  bool
}

// linearizes reports whether it found a linearization of s's operations:
// an order of them that respects real time (an operation that returned
// before another was called comes first) in which the model accepts every
// one. False means nothing, but that the deciding search must decide.
func (s *search) linearizes() bool {
	return s.linearizesWithin(max(quickSearchStepsMin, quickSearchStepsPerOperation*len(s.operations)))
}

// linearizesWithin is linearizes with a budget of steps.
func (s *search) linearizesWithin(budget int) bool {
	if len(s.operations) == 0 {
		return true
	}
	if s.model.Step == nil {
		return false // decide refuses a model without Step
	}
	l := newCallList(s.operations)
	var stack []linearized
	state := s.model.Init()
	for node := l.first(); !l.empty(); {
		if budget--; budget < 0 {
			return false
		}
		e := l.entries[node-1]
		if !e.isReturn {
			// A candidate: called before any operation left returned,
			// so it may go next.
			operation := &s.operations[e.operation]
			if ok, after := s.model.Step(state, operation.Input, operation.Output); ok {
				stack = append(stack, linearized{call: node, state: state, eager: isEager(operation.Input)})
				state = after
				l.lift(node)
				node = l.first()
			} else {
				node = l.next[node]
			}
			continue
		}
		// The earliest return still in the list: no later call may go
		// before its operation, and none of the candidates fit. Take the
		// last operation linearized back and try what follows it; an
		// eager one has no alternatives worth trying (eagerInput), so
		// take back the one before it too.
		var top linearized
		if stack, top = l.takeBack(stack, nil); top.call < 0 {
			return false
		}
		state = top.state
		node = l.next[top.call]
	}
	return true
}

// linearized is an operation on a search's stack: the node of its call
// in the callList, and the state before it.
type linearized struct {
	call  int32
	state any
	eager bool
}

// callList holds a search's calls and returns in time order (a call
// before a return at the same time, as porcupine sorts them) as a doubly
// linked list of those not yet linearized: node 0 is its head, node i+1
// is entries[i], and -1 ends it. The searches (Wing and Gong's) walk it
// from the head: every call before the first return is a candidate.
type callList struct {
	entries        []quickEntry
	next, previous []int32
	// returnOf maps an operation to its return's node.
	returnOf []int32
}

func newCallList(operations []porcupine.Operation) *callList {
	n := len(operations)
	entries := make([]quickEntry, 0, 2*n)
	for i, operation := range operations {
		entries = append(entries,
			quickEntry{time: operation.Call, operation: int32(i)},
			quickEntry{time: operation.Return, operation: int32(i), isReturn: true})
	}
	slices.SortFunc(entries, func(x, y quickEntry) int {
		if c := cmp.Compare(x.time, y.time); c != 0 {
			return c
		}
		switch {
		case !x.isReturn && y.isReturn:
			return -1
		case x.isReturn && !y.isReturn:
			return 1
		}
		return 0
	})
	l := &callList{entries: entries, next: make([]int32, 2*n+1), previous: make([]int32, 2*n+1), returnOf: make([]int32, n)}
	for node := range l.next {
		l.next[node], l.previous[node] = int32(node+1), int32(node-1)
	}
	l.next[2*n] = -1
	for i, e := range entries {
		if e.isReturn {
			l.returnOf[e.operation] = int32(i + 1)
		}
	}
	return l
}

func (l *callList) first() int32 { return l.next[0] }
func (l *callList) empty() bool  { return l.next[0] < 0 }

// lift takes a call and its return out of the list.
func (l *callList) lift(call int32) {
	l.next[l.previous[call]] = l.next[call]
	l.previous[l.next[call]] = l.previous[call] // a call's return follows it
	ret := l.returnOf[l.entries[call-1].operation]
	l.next[l.previous[ret]] = l.next[ret]
	if l.next[ret] >= 0 {
		l.previous[l.next[ret]] = l.previous[ret]
	}
}

// unlift puts a call and its return back, undoing the lifts in reverse
// order.
func (l *callList) unlift(call int32) {
	ret := l.returnOf[l.entries[call-1].operation]
	l.next[l.previous[ret]] = ret
	if l.next[ret] >= 0 {
		l.previous[l.next[ret]] = ret
	}
	l.next[l.previous[call]] = call
	l.previous[l.next[call]] = call
}

// takeBack pops the stack's operations back into the list down to and
// including the last one that is not eager (eagerInput), calling
// untaken (when not nil) with each one's operation, and returns that
// one; its call is -1 when the stack ran out first.
func (l *callList) takeBack(stack []linearized, untaken func(operation int32)) ([]linearized, linearized) {
	for len(stack) > 0 {
		top := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		l.unlift(top.call)
		if untaken != nil {
			untaken(l.entries[top.call-1].operation)
		}
		if !top.eager {
			return stack, top
		}
	}
	return stack, linearized{call: -1}
}

// eagerInput is an operation's input that may be eager: its step never
// fails and leaves a state from which every later step does at least as
// well as from the state before it (the log model's unobserved appends
// and deleted copies only make more available to fill gaps). Such an
// operation, once it may go next, goes next in some linearization if in
// any: moved forward to that moment, everything that must precede it
// still does (it could go next, so they are linearized already), what
// must follow it still does, and every step between does at least as
// well. So when the search has taken one back, every other order after
// the same prefix is hopeless too, and the search takes back the
// operation before it as well, instead of trying the eager one at every
// later place: a search with many of them (a deleted copy per send under
// retention) otherwise tries each of their subsets at every point.
type eagerInput interface{ eager() bool }

func isEager(input any) bool {
	e, ok := input.(eagerInput)
	return ok && e.eager()
}
