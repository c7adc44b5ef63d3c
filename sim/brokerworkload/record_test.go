package brokerworkload

import (
	"testing"

	"sluice/sim"
	"sluice/sim/simtest"
)

// The broker workload's recording also holds its crashes, halts and client
// faults, one for one with its stats, and the history the checks judged.
func TestRecordingWatchesWithoutChangingTheRun(t *testing.T) {
	for _, seed := range []uint64{2, 3, 5} {
		recorded, kinds := simtest.Recorded(t, New(), seed)
		rec := recorded.Recording
		ops, _ := recorded.Stat("ops")
		if int64(len(rec.History)) != ops || !rec.Checker.FinalDrain {
			t.Fatalf("seed %d: recorded %d ops of %d, final drain %v", seed, len(rec.History), ops, rec.Checker.FinalDrain)
		}
		crashes, _ := recorded.Stat("broker_crashes")
		halts, _ := recorded.Stat("halts")
		clientCrashes, _ := recorded.Stat("client_crashes")
		if int64(kinds[sim.EventCrash]) != crashes || int64(kinds[sim.EventHalt]) != halts {
			t.Fatalf("seed %d: recorded %d crashes and %d halts; the stats say %d and %d", seed, kinds[sim.EventCrash], kinds[sim.EventHalt], crashes, halts)
		}
		if int64(kinds[sim.EventFaultStart]) < clientCrashes {
			t.Fatalf("seed %d: %d lasting faults recorded, fewer than the %d client crashes", seed, kinds[sim.EventFaultStart], clientCrashes)
		}
	}
}
