package logworkload

import (
	"testing"

	"sluice/sim"
	"sluice/sim/simtest"
)

// The log workload's recording holds the machine's crashes and halts one
// for one with its stats, each followed by the log opened again.
func TestRecordingWatchesWithoutChangingTheRun(t *testing.T) {
	for _, seed := range []uint64{1, 2, 3, 7} {
		recorded, kinds := simtest.Recorded(t, New(), seed)
		crashes, _ := recorded.Stat("crashes")
		halts, _ := recorded.Stat("halts")
		if int64(kinds[sim.EventCrash]) != crashes || int64(kinds[sim.EventHalt]) != halts {
			t.Fatalf("seed %d: recorded %d crashes and %d halts; the stats say %d and %d", seed, kinds[sim.EventCrash], kinds[sim.EventHalt], crashes, halts)
		}
		if int64(kinds[sim.EventStart]) != 1+crashes+halts {
			t.Fatalf("seed %d: the log opened %d times after %d crashes and %d halts", seed, kinds[sim.EventStart], crashes, halts)
		}
	}
}
