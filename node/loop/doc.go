// Package loop is a node's event loop in production: one goroutine that runs
// posted functions one at a time, a core.Clock whose timers fire on that
// goroutine, and a core.Entropy seeded from the operating system.
//
// Everything core does for a node happens inside functions this loop runs,
// so core needs no locks: the loop is its only thread. Socket readers, disk
// workers and timers live on their own goroutines and hand their results to
// the loop with Post. The inbox is bounded, so a busy loop pushes back on
// those goroutines (a socket reader that cannot post stops reading, and TCP
// slows the client down) instead of growing without limit.
//
// It must never block the loop on itself: a Post made by the loop goroutine
// (a handler posting a follow-up, a zero-delay timer) never waits for room in
// the inbox, because only the loop could make that room. It recovers no
// panics either: a panic in core is a bug, and the process should crash
// loudly rather than carry on with a node in an unknown state.
//
// Start with Loop (loop.go): New, Post, Run, Stop. Then Clock (clock.go) and
// NewEntropy (entropy.go). goroutine_id.go is how Post recognises the loop.
package loop
