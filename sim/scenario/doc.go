// Package scenario is what one simulated run of a Sluice cluster is made
// of, written down: the cluster (how many nodes, all of them voters of the
// metadata quorum and brokers), its topics and their durability settings,
// the clients (producers with acks=all or acks=1, idempotent or not;
// readers; consumer groups), the protocol timeouts, the disk and network
// conditions, the fault rates of the swarm, the explicit fault schedule,
// the phase lengths, the BUGGIFY chances and the planted bugs switched on.
//
// A Scenario is a value: Draw makes one from a seed (swarm testing: one
// 64-bit seed decides everything, and many seeds leave whole fault kinds
// out), Format writes it as readable text, and Parse reads that text back,
// so a run can be printed, saved under scenarios/, edited and replayed. A
// file may fix only some parts and name a seed: Parse draws the scenario of
// that seed, then replaces what the file says (see parse.go for the rules).
// Parse(Format(s)) == s for every valid s.
//
// What it must never do: depend on anything but its input. Drawing uses
// kernel.NewRand streams of the seed only; no map order reaches the text.
// It knows nothing of how a scenario is run: sim/clusterworkload runs it.
//
// Start reading with Scenario (scenario.go) and the fault events
// (event.go), then Draw (draw.go; the operator's actions and producers'
// batching, draw_operations.go; the fault schedule, draw_schedule.go) and
// the text format (format.go; parse.go, with parse_events.go and
// parse_values.go). Bounds on everything a scenario may ask for are in limits.go.
package scenario
