package quorumworkload

import (
	"strconv"
	"testing"

	"sluice/sim"
	"sluice/sim/simtest"
)

// The quorum workload's recording holds every node, its crashes one for
// one with the stats, and every leadership the checker saw, which is what
// a report's controller row draws.
func TestRecordingWatchesWithoutChangingTheRun(t *testing.T) {
	for _, seed := range []uint64{1, 2, 3} {
		recorded, kinds := simtest.Recorded(t, New(), seed)
		nodes := 0
		for _, o := range recorded.Options {
			if o.Name == "voters" || o.Name == "observers" {
				n, err := strconv.Atoi(o.Value)
				if err != nil {
					t.Fatalf("seed %d: option %s=%q", seed, o.Name, o.Value)
				}
				nodes += n
			}
		}
		if len(recorded.Recording.Nodes) != nodes {
			t.Fatalf("seed %d: %d nodes recorded of %d", seed, len(recorded.Recording.Nodes), nodes)
		}
		leaders, _ := recorded.Stat("leaders")
		if int64(kinds[sim.EventController]) != leaders || leaders == 0 {
			t.Fatalf("seed %d: %d leaderships recorded; the stats say %d", seed, kinds[sim.EventController], leaders)
		}
		if len(recorded.Recording.History) != 0 {
			t.Fatalf("seed %d: a client history from a workload without clients", seed)
		}
	}
}
