// Package simtest holds what the workloads' tests share: running a span of
// seeds on two goroutines, the check that a seed is a pure function of
// itself, finding the first seed a planted bug fails, reading a result's
// stats, what every workload's recording must hold (recording.go), and
// what a workload's slow links promise (slow_links.go).
// It is for tests only, as net/http/httptest is.
//
// Start with seeds.go; canaries.go is the canary search every workload's
// TestCanariesAreCaught runs.
package simtest
