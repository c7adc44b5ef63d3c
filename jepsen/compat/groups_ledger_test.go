package compat

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// groupRead is one delivery of a record to a group member.
type groupRead struct {
	member string
	at     partitionOffset
	value  string
	// committed says the member's commit covering this record
	// succeeded, as the client reported it; false when it failed or the
	// client does not say (its commits are asynchronous).
	committed bool
}

// groupLedger records, across a group's members, which partitions each
// was assigned and revoked (from the clients' rebalance callbacks) and
// every record each read, in the order members finished with them. It
// notes violations as they happen: a partition assigned to a member while
// another holds it, a record read by a member that does not own its
// partition. What was read is checked against what was produced at the
// end (a member may read a record before its producer hears it landed).
// Members call it from their own goroutines.
type groupLedger struct {
	mutex    sync.Mutex
	produced map[partitionOffset]string
	// owner is each assigned partition's member.
	owner map[int32]string
	// assignments counts, per member, how many times a rebalance handed
	// it partitions.
	assignments map[string]int
	reads       []groupRead
	history     []string // assignment events, for failure messages
	found       problems // violations seen as they happened
	// changed is closed and replaced on every change, waking waiters.
	changed chan struct{}
}

func newGroupLedger() *groupLedger {
	return &groupLedger{
		produced:    map[partitionOffset]string{},
		owner:       map[int32]string{},
		assignments: map[string]int{},
		changed:     make(chan struct{}),
	}
}

// notify wakes whoever waits for a change. Call with the mutex held.
func (l *groupLedger) notify() {
	close(l.changed)
	l.changed = make(chan struct{})
}

// addProduced adds records the test produced: what the members must read.
func (l *groupLedger) addProduced(produced map[partitionOffset]string) {
	l.mutex.Lock()
	defer l.mutex.Unlock()
	maps.Copy(l.produced, produced)
	l.notify()
}

// assigned notes that member was handed partitions. A partition still
// held by another member is a violation: two members would read it.
func (l *groupLedger) assigned(member string, partitions []int32) {
	l.mutex.Lock()
	defer l.mutex.Unlock()
	sorted := slices.Sorted(slices.Values(partitions))
	l.history = append(l.history, fmt.Sprintf("%s assigned %v", member, sorted))
	l.assignments[member]++
	for _, p := range sorted {
		if holder, held := l.owner[p]; held && holder != member {
			l.found.add("partition %d assigned to %s while %s still holds it", p, member, holder)
		}
		l.owner[p] = member
	}
	l.notify()
}

// revoked notes that member gave partitions up.
func (l *groupLedger) revoked(member string, partitions []int32) {
	l.mutex.Lock()
	defer l.mutex.Unlock()
	sorted := slices.Sorted(slices.Values(partitions))
	l.history = append(l.history, fmt.Sprintf("%s revoked %v", member, sorted))
	for _, p := range sorted {
		if holder := l.owner[p]; holder != member {
			l.found.add("%s gave up partition %d, which it did not hold (holder %q)", member, p, holder)
			continue
		}
		delete(l.owner, p)
	}
	l.notify()
}

// read notes records a member has finished with. checkOwner says the
// client reports assignments, so each partition must be the member's.
func (l *groupLedger) read(member string, checkOwner bool, reads ...groupRead) {
	l.mutex.Lock()
	defer l.mutex.Unlock()
	for _, r := range reads {
		r.member = member
		if holder := l.owner[r.at.Partition]; checkOwner && holder != member {
			l.found.add("%s read %v while partition %d is %s's", member, r.at, r.at.Partition, describeHolder(holder))
		}
		l.reads = append(l.reads, r)
	}
	l.notify()
}

func describeHolder(holder string) string {
	if holder == "" {
		return "nobody"
	}
	return holder
}

// waitFor waits until condition, called with the mutex held, is true, or
// fails t after groupWaitTimeout saying what it waited for and how far
// the group got.
func (l *groupLedger) waitFor(t testing.TB, what string, condition func() bool) {
	t.Helper()
	timeout := time.NewTimer(groupWaitTimeout)
	defer timeout.Stop()
	for {
		l.mutex.Lock()
		met, changed := condition(), l.changed
		l.mutex.Unlock()
		if met {
			return
		}
		select {
		case <-changed:
		case <-timeout.C:
			t.Fatalf("waited %v for %s; %s", groupWaitTimeout, what, l.summary())
		}
	}
}

// summary says how far the group got, for failure messages.
func (l *groupLedger) summary() string {
	l.mutex.Lock()
	defer l.mutex.Unlock()
	history := l.history[max(len(l.history)-problemsShownMax, 0):]
	return fmt.Sprintf("owners %v; %d of %d records read (%d reads); last assignment events: %s",
		l.ownershipLocked(), l.distinctReadLocked(), len(l.produced), len(l.reads), strings.Join(history, "; "))
}

// ownership is each member's partitions, sorted.
func (l *groupLedger) ownership() map[string][]int32 {
	l.mutex.Lock()
	defer l.mutex.Unlock()
	return l.ownershipLocked()
}

func (l *groupLedger) ownershipLocked() map[string][]int32 {
	owned := map[string][]int32{}
	for _, p := range slices.Sorted(maps.Keys(l.owner)) {
		owned[l.owner[p]] = append(owned[l.owner[p]], p)
	}
	return owned
}

// balancedAmongLocked says every partition is owned, by exactly members,
// each holding an even share (floor or ceiling of partitions/members).
func (l *groupLedger) balancedAmongLocked(partitions int32, members ...string) bool {
	if len(l.owner) != int(partitions) {
		return false
	}
	owned := l.ownershipLocked()
	if len(owned) != len(members) {
		return false
	}
	low := int(partitions) / len(members)
	high := (int(partitions) + len(members) - 1) / len(members)
	for _, member := range members {
		if n := len(owned[member]); n < low || n > high {
			return false
		}
	}
	return true
}

// allReadLocked says every produced record has been read at least once.
func (l *groupLedger) allReadLocked() bool {
	return l.distinctReadLocked() == len(l.produced)
}

func (l *groupLedger) distinctReadLocked() int {
	seen := map[partitionOffset]bool{}
	for _, r := range l.reads {
		if _, ok := l.produced[r.at]; ok {
			seen[r.at] = true
		}
	}
	return len(seen)
}

// violations is what the ledger noticed as it happened.
func (l *groupLedger) violations() problems {
	l.mutex.Lock()
	defer l.mutex.Unlock()
	return l.found
}

// readsSnapshot is every read so far, in order.
func (l *groupLedger) readsSnapshot() []groupRead {
	l.mutex.Lock()
	defer l.mutex.Unlock()
	return slices.Clone(l.reads)
}

// assignmentsPerMember is how many times each member has been handed
// partitions so far: one more means a rebalance.
func (l *groupLedger) assignmentsPerMember() map[string]int {
	l.mutex.Lock()
	defer l.mutex.Unlock()
	return maps.Clone(l.assignments)
}

// assignmentEvents counts the assignments and revocations seen.
func (l *groupLedger) assignmentEvents() int {
	l.mutex.Lock()
	defer l.mutex.Unlock()
	return len(l.history)
}

// producedSnapshot is every produced record so far.
func (l *groupLedger) producedSnapshot() map[partitionOffset]string {
	l.mutex.Lock()
	defer l.mutex.Unlock()
	return maps.Clone(l.produced)
}
