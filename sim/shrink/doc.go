// Package shrink reduces a failing cluster scenario to a smaller one that
// still fails the same check: what `sluice sim --seed S --shrink` does
// before writing the reduced case under scenarios/regressions/. Each step
// proposes a smaller scenario (a fault event dropped, the safety phase
// halved, a client, a partition, a topic or a node fewer, the replication
// factor kept within the nodes) and keeps it only if a run of it fails
// the same check; it stops when no step helps or its run budget is spent.
// The seed stays the same, so what the scenario leaves open (latencies,
// tie-breaks) is drawn as before.
//
// A dropped fault leaves an idle slot in its place (scenario.KindIdle):
// every event of the schedule takes a tie-break draw when the safety
// phase starts, so deleting one would replay a different run from the
// start, and a race (a failure that needs two things to happen in one
// order within microseconds) would move away at every step. With the slot
// the run is the same until the moment the fault would have struck. Only
// at the end does a step try to drop the slots themselves.
//
// What it must never do: accept a step whose run fails another check, or
// passes (the reduced case must show the same bug), or run anything but
// the simulator: each candidate is one deterministic run, so the shrink
// itself is reproducible.
//
// Start reading with Shrink (shrink.go); the steps are in steps.go, and
// File (file.go) writes the result as a scenario file.
package shrink
