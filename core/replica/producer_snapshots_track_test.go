package replica

import (
	"slices"
	"strconv"
	"testing"
	"time"
)

// TestProducerSnapshotsKnowTheirDirectory: a replica keeps track of the
// snapshots in its directory instead of listing it after every snapshot
// written (producerSnapshots.onDisk). What it knows must be what a listing
// says, on every replica, through many rolls and prunes, a restart, and a
// truncation that rebuilds the producer state.
func TestProducerSnapshotsKnowTheirDirectory(t *testing.T) {
	h := newHarness(t, 3, map[string]string{"segment.bytes": "512"})
	h.setLeader(1, []int32{1, 2, 3})
	check := func(when string) {
		t.Helper()
		for _, id := range h.ids {
			s := h.partition(id).snapshots
			if !s.known {
				t.Fatalf("%s: node %d lists its directory every time", when, id)
			}
			if listed, _ := s.list(); !slices.Equal(listed, s.onDisk) {
				t.Fatalf("%s: node %d knows snapshots %v, the directory holds %v", when, id, s.onDisk, listed)
			}
		}
	}
	produce := func(count int) {
		for i := range count {
			_, ack := h.produce("value-" + strconv.Itoa(i))
			h.runUntil("acknowledged", func() bool { return ack.answered })
			h.run(5 * time.Millisecond) // the snapshots' syncs
			check("after produce " + strconv.Itoa(i))
		}
	}
	produce(40)
	if listed, _ := h.partition(2).snapshots.list(); len(listed) != snapshotsKept {
		t.Fatalf("node 2 holds snapshots %v: the test needs rolls and prunes", listed)
	}
	h.crash(3)
	h.restart(3)
	h.run(50 * time.Millisecond)
	check("after a restart")
	h.setLeader(2, []int32{1, 2, 3})
	produce(20)
}
