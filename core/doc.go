// Package core defines the seams between Sluice's deterministic logic and the
// world it runs in: a clock with timers, a disk, a network of framed
// connections, and entropy.
//
// Everything under core/ is a state machine driven by one event loop per
// node. It never starts goroutines, reads the wall clock, sleeps, touches the
// OS, takes locks, uses select, or draws from global randomness; and map
// iteration order never reaches an output. Those rules let the same code run
// on real files and sockets (disk/, net/, node/) and inside the seeded
// single-threaded simulator (sim/), where any run replays bit for bit from its
// seed. TestCoreIsDeterministic (core/guard_test.go) enforces them.
//
// The contract every implementation keeps: callbacks handed to the world
// (a timer's function, a sync completion, a frame arriving on a connection)
// run later on the owning node's loop, one at a time, never inside the call
// that registered them.
//
// Start reading with World (world.go), then the four seams: clock.go,
// disk.go, network.go, entropy.go. The first component built on them is the
// partition log in core/log.
package core
