package shrink

import (
	"fmt"
	"strings"

	"sluice/sim/scenario"
)

// Origin says where a shrunk case came from, for its file's header.
type Origin struct {
	Workload string
	Seed     uint64
	Canaries []string
	// Command replays the original failure.
	Command string
	// Path is where the file goes, for its replay line.
	Path string
	// OriginalSize and OriginalEvents describe the scenario before the
	// shrink.
	OriginalSize, OriginalEvents int
	// Revision is the commit the failing binary was built from, when
	// known: the code the original seed failed on.
	Revision string
	// SearchSteps is the checker's search budget the failure needs, when
	// not the default (an inconclusive search): the replay must give it.
	SearchSteps int
}

// FileName is the regression file's conventional name:
// <workload>-<check>-<seed>.txt.
func FileName(workload, check string, seed uint64) string {
	return fmt.Sprintf("%s-%s-%d.txt", workload, check, seed)
}

// File writes the shrunk scenario as a scenario file: a header comment
// (the original seed and check, the command that replays the original,
// what the shrink removed), then the scenario in full. With canaries on
// the file expects the check to fail, and the replay test holds it to
// that; without, the failure is a real bug, and the file expects a pass,
// so the test fails until the bug is fixed.
func File(out Outcome, origin Origin) string {
	var b strings.Builder
	line := func(format string, args ...any) { fmt.Fprintf(&b, "# "+format+"\n", args...) }
	line("Shrunk from %s workload seed %d, which failed check %s.", origin.Workload, origin.Seed, out.Check)
	if len(origin.Canaries) > 0 {
		line("Planted bugs on: %s (the file switches them on, and expects the failure).", strings.Join(origin.Canaries, ", "))
	} else {
		line("A real failure: the file expects a pass, so its replay fails until the bug is fixed.")
	}
	if origin.Revision != "" {
		line("Original: %s (on revision %s)", origin.Command, origin.Revision)
	} else {
		line("Original: %s", origin.Command)
	}
	line("Shrink: size %d -> %d, events %d -> %d, in %d runs; steps: %s.",
		origin.OriginalSize, Size(out.Scenario), origin.OriginalEvents, FaultEvents(out.Scenario), out.Runs, strings.Join(out.Steps, "; "))
	if idle := len(out.Scenario.Schedule) - FaultEvents(out.Scenario); idle > 0 {
		line("The %d idle lines hold the places of dropped faults: without them the run would take other tie-break draws and replay differently.", idle)
	}
	line("Failure of the shrunk case: %s", truncate(out.Result.Detail, 300))
	path := origin.Path
	if path == "" {
		path = "scenarios/regressions/" + FileName(origin.Workload, out.Check, origin.Seed)
	}
	if origin.SearchSteps != 0 {
		line("Replay: bin/sluice sim --scenario %s --search-steps %d (the failure needs that search budget)", path, origin.SearchSteps)
	} else {
		line("Replay: bin/sluice sim --scenario %s", path)
	}
	s := out.Scenario
	s.Canaries = append(append([]string{}, s.Canaries...), missing(origin.Canaries, s.Canaries)...)
	if len(origin.Canaries) > 0 {
		s.Expect = scenario.Expect{Fail: true, Check: out.Check}
	} else {
		s.Expect = scenario.Expect{}
	}
	b.WriteString(scenario.Format(s))
	return b.String()
}

func missing(want, have []string) []string {
	var out []string
	for _, w := range want {
		found := false
		for _, h := range have {
			found = found || h == w
		}
		if !found {
			out = append(out, w)
		}
	}
	return out
}

func truncate(text string, n int) string {
	text = strings.ReplaceAll(text, "\n", " ")
	if len(text) <= n {
		return text
	}
	return text[:n] + "..."
}
