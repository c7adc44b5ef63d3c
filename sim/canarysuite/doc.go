// Package canarysuite measures the simulator's power: for every planted
// bug (canary) of every workload it runs consecutive seeds with the bug
// switched on, from several starting points, and counts the seeds until a
// check first fails. `sluice sim --canaries` prints the table (canary,
// workload, seeds to first failure as median and worst over the starting
// points, the checks that caught it, its bound), and the package's test
// fails if any canary escapes its bound (sim.Canary.SeedsMax) from any
// starting point.
//
// What it must never do: judge a run itself. A catch is whatever the
// workload's own checks report; this package only counts. Each seed still
// runs alone on one goroutine, so every measurement is reproducible: the
// same starting points give the same table.
//
// Start reading with Measure (suite.go), then Table (table.go).
package canarysuite
