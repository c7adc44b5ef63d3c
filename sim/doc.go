// Package sim is the deterministic simulator's frame: a Machine (one
// simulated node: its clock, disk, network endpoint and the core.World a
// broker runs in), the Workload interface every workload implements (a run
// is a pure function of its seed and options), Result and its one-line
// form, Sweep (seeds in parallel, each single-threaded), Coverage (fault
// kinds and BUGGIFY sites reached, each workload counting against what it
// declares it can reach) and Recording (the structured events a report
// draws, kept by every workload when RunOptions.Record asks, without
// changing the run).
//
// The pieces below it: sim/kernel (virtual time and the one event queue),
// sim/simdisk and sim/simnet (the faulty disk and network), sim/simclient
// (Kafka clients that record a history), sim/scenario (what a run does,
// drawn from a seed or read from a file), the workloads (logworkload,
// brokerworkload, quorumworkload, clusterworkload — the default), and the
// tools (catalog, report, shrink, canarysuite); sim/simtest is what the
// workloads' tests share.
//
// What it must never do: anything that makes a run depend on more than
// its seed and scenario — goroutines inside a run, the wall clock, global
// randomness, map order reaching an output. Sweep's workers are the only
// goroutines, one run each.
//
// Start reading with workload.go, then machine.go, then
// clusterworkload's doc.go.
package sim
