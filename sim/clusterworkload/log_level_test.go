package clusterworkload

import (
	"log/slog"
	"strings"
	"testing"

	"sluice/sim"
)

// Following one seed: debug lines name every append, with the producer's
// sequence, and asking for the default level changes nothing.
func TestLogLevelPutsCoreDebugLinesInTheTrace(t *testing.T) {
	const seed = 11
	base := New().Run(seed, sim.RunOptions{})

	warn := slog.LevelWarn
	if again := New().Run(seed, sim.RunOptions{LogLevel: &warn}); again.TraceHash != base.TraceHash {
		t.Fatalf("the default level given explicitly ran trace %s, not %s", again.TraceHash, base.TraceHash)
	}

	debug := slog.LevelDebug
	var trace strings.Builder
	detailed := New().Run(seed, sim.RunOptions{LogLevel: &debug, Trace: &trace})
	if detailed.TraceHash == base.TraceHash {
		t.Fatalf("debug lines left the trace hash at %s", base.TraceHash)
	}
	// Seed 11 runs idempotent producers (p1, p3) and a plain one (p2).
	plain, idempotent := 0, 0
	for line := range strings.Lines(trace.String()) {
		switch {
		case !strings.Contains(line, " DEBUG appended partition="):
		case strings.Contains(line, " producer=") && strings.Contains(line, " sequence="):
			idempotent++
		default:
			plain++
		}
	}
	if plain == 0 || idempotent == 0 {
		t.Fatalf("traced %d plain and %d idempotent leader appends; want both", plain, idempotent)
	}
}
