// Package kernel is the simulator's core: virtual time, one event queue for
// every simulated node and client, seeded PRNG streams, processes that crash,
// and the trace whose hash proves a run is deterministic.
//
// Everything in a simulation runs inside Kernel.Step on one goroutine. Start
// with Kernel.Schedule and Kernel.Step (kernel.go); Process (process.go) is
// what a crash kills; Trace (trace.go) is what a seed must reproduce; the
// draws every workload makes from its streams (a uniform duration, a
// Poisson process of faults) are in draws.go.
package kernel
