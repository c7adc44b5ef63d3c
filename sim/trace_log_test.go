package sim

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
	"time"

	"sluice/sim/kernel"
)

// TestTraceHandlerRendersWithsInOrder checks the lines the trace's log
// handler writes: attributes from With calls (rendered lazily, at the
// first record) come first, in order and in the group each was added in,
// then the record's own, in the innermost group; a logger made from one
// that has already logged renders the same.
func TestTraceHandlerRendersWithsInOrder(t *testing.T) {
	var out bytes.Buffer
	k := kernel.NewKernel(1, kernel.NewTrace(&out))
	root := slog.New(newTraceHandler(k, "n1", slog.LevelInfo))
	a := root.With("a", 1)
	a.Info("first", "x", "y")
	g := a.WithGroup("g").With("b", true, "d", 2*time.Second).WithGroup("h")
	g.Info("second", "c", 3)
	a.With("e", "f").Warn("third")
	root.Debug("dropped")
	want := []string{
		"INFO first a=1 x=y",
		"INFO second a=1 g.b=true g.d=2s g.h.c=3",
		"WARN third a=1 e=f",
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != len(want) {
		t.Fatalf("got %d lines, want %d:\n%s", len(lines), len(want), out.String())
	}
	for i, line := range lines {
		if !strings.HasSuffix(line, " n1 "+want[i]) {
			t.Errorf("line %d: %q, want it to end with %q", i, line, "n1 "+want[i])
		}
	}
}
