package group

import (
	"testing"
	"time"
)

// TestSameSeedSameTrace runs one busy scenario twice — members joining,
// syncing, committing, one falling silent and expiring, a restart — and
// requires the same trace, member ids and all: nothing the coordinator
// does may depend on Go's map order or anything outside the seed.
func TestSameSeedSameTrace(t *testing.T) {
	scenario := func() (string, []string) {
		tc := newTestCoordinator(t, testConfig())
		members := tc.stableGroup("g", "a", "b", "c")
		for i, m := range members {
			requireCode(t, "commit", tc.commitCode("g", m.id, m.generation, "orders", int32(i), int64(10*i)), nil)
		}
		tc.run(5 * time.Second)
		requireCode(t, "heartbeat", tc.heartbeat(members[0]), nil)
		tc.run(6 * time.Second) // b and c expire: a rebalance
		tc.stableGroup("h", "x", "y")
		tc.restart()
		tc.run(time.Minute)
		var ids []string
		for _, m := range members {
			ids = append(ids, m.id)
		}
		return tc.kernel.Trace().Hash(), ids
	}
	firstHash, firstIDs := scenario()
	secondHash, secondIDs := scenario()
	if firstHash != secondHash {
		t.Fatalf("trace hashes differ: %s, %s", firstHash, secondHash)
	}
	for i := range firstIDs {
		if firstIDs[i] != secondIDs[i] {
			t.Fatalf("member ids differ: %v, %v", firstIDs, secondIDs)
		}
	}
}
