// Package node assembles one production Sluice node: it reads the
// configuration, opens the data directory through disk/, starts the event
// loop (node/loop), runs core/broker on that loop, listens for clients
// through net/, and stops gracefully on SIGTERM: stop accepting, finish and
// sync what is in flight, close.
//
// It is the only place where the real world meets core: everything here is
// wiring, and any logic that could be wrong in an interesting way belongs in
// core/, where the simulator can test it.
//
// Start with Run (node.go), then Config (config.go).
package node
