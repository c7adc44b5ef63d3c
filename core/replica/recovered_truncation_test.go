package replica

import (
	"testing"
	"time"
)

// TestATruncationBeforeTheRecoverySyncStillRecovers: a replica reopened
// over a tail recovery found only in the page cache serves nothing until a
// sync covers what recovery kept. If a truncation cuts that tail before the
// sync completes, what is left is all that must become durable: waiting
// for a sync past the cut would, in a page-cache log, leave the replica
// leading without answering for as long as its next sync is away (cluster
// seed 23878).
func TestATruncationBeforeTheRecoverySyncStillRecovers(t *testing.T) {
	h := newHarness(t, 1, map[string]string{"flush.messages": "1000"})
	h.setLeader(1, []int32{1})
	for _, value := range []string{"a", "b", "c", "d"} {
		_, outcome := h.produce(value)
		h.runUntil("acknowledged", func() bool { return outcome.answered })
	}

	// Reopened on the same disk: the tail is still in the page cache,
	// unsynced (flush.messages is far off).
	if err := h.partition(1).Close(); err != nil {
		t.Fatal(err)
	}
	h.open(1)
	p := h.partition(1)
	if p.recovered {
		t.Fatal("the reopened replica counts as recovered before any sync: the test does not test what it says")
	}
	end := p.LogEndOffset()
	if err := p.truncate(end-2, "a test's cut before the recovery sync"); err != nil {
		t.Fatal(err)
	}
	h.run(100 * time.Millisecond)
	if !p.recovered {
		t.Fatalf("synced to %d after a cut to %d, yet the replica still waits for a sync to %d (%+v, halted %v)", p.log.SyncedOffset(), end-2, end, p.log.SyncStats(), h.nodes[1].halted)
	}
	h.applyTo(1)
	if !p.IsLeader() {
		t.Fatal("the recovered replica does not lead")
	}
}
