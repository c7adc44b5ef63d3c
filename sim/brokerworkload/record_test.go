package brokerworkload

import (
	"testing"

	"sluice/sim"
)

// A recording watches the run without changing it, pairs every lasting
// fault's start with its end, and keeps the history the checks judged.
func TestRecordingWatchesWithoutChangingTheRun(t *testing.T) {
	for _, seed := range []uint64{2, 3, 5} {
		plain := New().Run(seed, sim.RunOptions{})
		recorded := New().Run(seed, sim.RunOptions{Record: true})
		if recorded.TraceHash != plain.TraceHash {
			t.Fatalf("seed %d: recording changed the trace from %s to %s", seed, plain.TraceHash, recorded.TraceHash)
		}
		if plain.Recording != nil {
			t.Fatalf("seed %d: a recording nobody asked for", seed)
		}
		rec := recorded.Recording
		if rec == nil || rec.Workload != Name || len(rec.Nodes) != 1 || rec.Nodes[0] != nodeName {
			t.Fatalf("seed %d: recording %+v", seed, rec)
		}
		ops, _ := recorded.Stat("ops")
		if int64(len(rec.History)) != ops || !rec.Checker.FinalDrain {
			t.Fatalf("seed %d: recorded %d ops of %d, final drain %v", seed, len(rec.History), ops, rec.Checker.FinalDrain)
		}
		if rec.SafetyStart <= 0 || rec.LivenessStart <= rec.SafetyStart {
			t.Fatalf("seed %d: safety from %v, liveness from %v", seed, rec.SafetyStart, rec.LivenessStart)
		}
		open := map[string]bool{}
		starts := map[sim.EventKind]int{}
		for _, e := range rec.Events {
			starts[e.Kind]++
			switch e.Kind {
			case sim.EventFaultStart:
				if open[e.Label] {
					t.Fatalf("seed %d: %s started twice at %v", seed, e.Label, e.At)
				}
				open[e.Label] = true
			case sim.EventFaultEnd:
				if !open[e.Label] {
					t.Fatalf("seed %d: %s ended at %v without starting", seed, e.Label, e.At)
				}
				delete(open, e.Label)
			}
		}
		if len(open) > 0 {
			t.Fatalf("seed %d: faults never ended: %v", seed, open)
		}
		crashes, _ := recorded.Stat("broker_crashes")
		halts, _ := recorded.Stat("halts")
		clientCrashes, _ := recorded.Stat("client_crashes")
		if int64(starts[sim.EventCrash]) != crashes || int64(starts[sim.EventHalt]) != halts || starts[sim.EventStart] < 1 {
			t.Fatalf("seed %d: recorded %d crashes, %d halts, %d starts; the stats say %d crashes, %d halts", seed,
				starts[sim.EventCrash], starts[sim.EventHalt], starts[sim.EventStart], crashes, halts)
		}
		if int64(starts[sim.EventFaultStart]) < clientCrashes {
			t.Fatalf("seed %d: %d lasting faults recorded, fewer than the %d client crashes", seed, starts[sim.EventFaultStart], clientCrashes)
		}
	}
}
