// Package catalog lists every simulator workload and every planted bug
// (canary), so the command line, the sweep tests and the canary suite all
// see one list (catalog.go). It also reads scenario files — named
// scenarios and regression cases under scenarios/ — and judges a run
// against what its file promises (scenario_file.go); its tests replay
// every file and run every workload twice to compare trace hashes.
//
// Start reading with catalog.go, then scenario_file.go.
package catalog
