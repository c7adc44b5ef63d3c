package shrink

import (
	"bytes"
	"slices"
	"strings"
	"testing"

	"sluice/sim"
	"sluice/sim/clusterworkload"
	"sluice/sim/scenario"
)

// An idle slot in a dropped fault's place replays the run exactly up to
// the moment the fault would have struck: the traces agree line for line
// until the nemesis's event, where one names the fault and the other
// idle. Deleting the fault outright shifts the kernel's tie-break draws of
// everything scheduled after the schedule, so that run parts from the
// original well before the fault's time, which is why a race would not
// shrink.
func TestAnIdleSlotReplaysTheRunUpToItsPlace(t *testing.T) {
	s := clusterworkload.ScenarioOf(3, nil)
	last := len(s.Schedule) - 1
	if last < 1 {
		t.Fatalf("seed 3 draws %d faults; the test needs two", len(s.Schedule))
	}
	fault := s.Schedule[last]
	idled := clone(s)
	idled.Schedule[last] = idle(fault)
	deleted := clone(s)
	deleted.Schedule = deleted.Schedule[:last]

	original, withIdle, withoutIt := traceOf(t, s), traceOf(t, idled), traceOf(t, deleted)
	at := firstDifference(original, withIdle)
	faultLine := "- nemesis." + string(fault.Kind)
	switch {
	case at < 0 || !strings.HasSuffix(original[at], faultLine):
		t.Fatalf("the traces part at line %d, not at the fault %q: %q", at, faultLine, lineAt(original, at))
	case !strings.HasSuffix(withIdle[at], "- nemesis.idle") || timeOf(withIdle[at]) != timeOf(original[at]):
		t.Fatalf("line %d of the idled run is %q, want the idle slot at %s", at, withIdle[at], timeOf(original[at]))
	}
	if parted := firstDifference(original, withoutIt); parted < 0 || parted >= at {
		t.Fatalf("deleting the fault parted the traces at line %d, not before the fault's line %d", parted, at)
	}
	t.Logf("the traces part at line %d of %d (%s); deleting the fault parts them at line %d", at, len(original), original[at], firstDifference(original, withoutIt))
	if FaultEvents(idled) != FaultEvents(s)-1 || Size(idled) != Size(s)-1 || Size(deleted) != Size(idled)-1 {
		t.Fatalf("faults %d -> %d, sizes %d, %d, %d", FaultEvents(s), FaultEvents(idled), Size(s), Size(idled), Size(deleted))
	}
}

// dropEvents leaves every candidate's schedule as long as it was, with
// idle slots where the dropped faults were, and never offers to drop an
// idle slot again.
func TestDropEventsLeavesIdleSlots(t *testing.T) {
	s := clusterworkload.ScenarioOf(3, nil)
	s.Schedule[0] = idle(s.Schedule[0])
	for _, c := range dropEvents(s) {
		if len(c.scenario.Schedule) != len(s.Schedule) {
			t.Fatalf("%s: %d events, want %d", c.name, len(c.scenario.Schedule), len(s.Schedule))
		}
		if err := c.scenario.Validate(); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		dropped := FaultEvents(s) - FaultEvents(c.scenario)
		if dropped < 1 || Size(c.scenario) != Size(s)-dropped {
			t.Fatalf("%s: dropped %d faults, size %d from %d", c.name, dropped, Size(c.scenario), Size(s))
		}
		for i, e := range c.scenario.Schedule {
			if e.At != s.Schedule[i].At || e.Kind != s.Schedule[i].Kind && e.Kind != scenario.KindIdle {
				t.Fatalf("%s: event %d is %v, was %v", c.name, i, e, s.Schedule[i])
			}
		}
	}
	if got := dropIdleSlots(s); len(got) != 1 || slices.ContainsFunc(got[0].scenario.Schedule, isIdle) || len(got[0].scenario.Schedule) != len(s.Schedule)-1 {
		t.Fatalf("dropIdleSlots gave %+v", got)
	}
}

func traceOf(t *testing.T, s scenario.Scenario) []string {
	t.Helper()
	var trace bytes.Buffer
	clusterworkload.RunScenario(s, sim.RunOptions{Trace: &trace})
	return strings.Split(trace.String(), "\n")
}

// firstDifference is the first line at which a and b differ, or -1.
func firstDifference(a, b []string) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	if len(a) != len(b) {
		return min(len(a), len(b))
	}
	return -1
}

func lineAt(lines []string, i int) string {
	if i < 0 || i >= len(lines) {
		return ""
	}
	return lines[i]
}

func timeOf(line string) string {
	time, _, _ := strings.Cut(line, " ")
	return time
}
