package simtest

import (
	"testing"

	"sluice/sim"
)

// Recorded runs seed twice, without a recording and with one, and checks
// what every workload's recording must hold: the same trace (recording
// watches the run, never changes it), none unasked, both phases marked,
// and every lasting fault's start paired with one end (heal ends what the
// nemesis left open). It returns the recorded result, with the events
// counted by kind, for the workload's own checks.
func Recorded(t *testing.T, w sim.Workload, seed uint64) (sim.Result, map[sim.EventKind]int) {
	t.Helper()
	plain := w.Run(seed, sim.RunOptions{})
	recorded := w.Run(seed, sim.RunOptions{Record: true})
	if recorded.TraceHash != plain.TraceHash {
		t.Fatalf("seed %d: recording changed the trace from %s to %s", seed, plain.TraceHash, recorded.TraceHash)
	}
	if plain.Recording != nil {
		t.Fatalf("seed %d: a recording nobody asked for", seed)
	}
	rec := recorded.Recording
	if rec == nil || rec.Workload != w.Name() || len(rec.Nodes) == 0 {
		t.Fatalf("seed %d: recording %+v", seed, rec)
	}
	if !recorded.Passed() {
		t.Fatalf("seed %d failed, so its recording may stop short: %s", seed, recorded.Line())
	}
	if rec.SafetyStart < 0 || rec.LivenessStart <= rec.SafetyStart {
		t.Fatalf("seed %d: safety from %v, liveness from %v", seed, rec.SafetyStart, rec.LivenessStart)
	}
	open := map[string]bool{}
	kinds := map[sim.EventKind]int{}
	for _, e := range rec.Events {
		kinds[e.Kind]++
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
	if kinds[sim.EventPhase] != 2 {
		t.Fatalf("seed %d: %d phases marked, want safety and liveness", seed, kinds[sim.EventPhase])
	}
	if kinds[sim.EventStart] < len(rec.Nodes) {
		t.Fatalf("seed %d: %d starts recorded for %d nodes", seed, kinds[sim.EventStart], len(rec.Nodes))
	}
	return recorded, kinds
}
