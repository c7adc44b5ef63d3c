package group

import (
	"fmt"
	"strings"
)

// state is where a group is in Kafka's classic rebalance protocol:
//
//	Empty ──join──▶ PreparingRebalance ──all joined / timeout──▶ CompletingRebalance
//	  ▲                 ▲       │                                     │
//	  │                 │       └──no member left──▶ Empty            │ leader's SyncGroup
//	  │                 │                                             ▼ persisted
//	  │                 └──────── join, leave, expiry ◀──────────── Stable
//	  │
//	Dead: the group was deleted (or its deletion is being written).
//
// A group loaded from the log starts Stable (members in its last
// generation) or Empty.
type state int8

const (
	stateEmpty state = iota
	statePreparingRebalance
	stateCompletingRebalance
	stateStable
	stateDead
)

// String is the state's name as Kafka spells it in DescribeGroups and
// ListGroups.
func (s state) String() string {
	switch s {
	case stateEmpty:
		return "Empty"
	case statePreparingRebalance:
		return "PreparingRebalance"
	case stateCompletingRebalance:
		return "CompletingRebalance"
	case stateStable:
		return "Stable"
	case stateDead:
		return "Dead"
	}
	return fmt.Sprintf("state(%d)", int8(s))
}

// validPreviousStates is Kafka's GroupMetadata.validPreviousStates: the
// only moves the protocol makes. Anything else is a bug, and transition
// panics on it.
var validPreviousStates = map[state][]state{
	stateEmpty:               {statePreparingRebalance},
	statePreparingRebalance:  {stateStable, stateCompletingRebalance, stateEmpty},
	stateCompletingRebalance: {statePreparingRebalance},
	stateStable:              {stateCompletingRebalance},
	stateDead:                {stateStable, statePreparingRebalance, stateCompletingRebalance, stateEmpty, stateDead},
}

// canMoveTo reports whether the protocol allows from → to.
func canMoveTo(from, to state) bool {
	for _, previous := range validPreviousStates[to] {
		if previous == from {
			return true
		}
	}
	return false
}

// stateByLowerName finds a state by its name in any case, for ListGroups'
// filter (Kafka compares case-insensitively).
func stateByLowerName(name string) (state, bool) {
	for s := stateEmpty; s <= stateDead; s++ {
		if strings.EqualFold(s.String(), name) {
			return s, true
		}
	}
	return 0, false
}
