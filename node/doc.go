// Package node assembles one production Sluice node: it reads the
// configuration, opens the data directory through disk/, starts the event
// loop (node/loop), runs core/broker on that loop, listens for clients and
// (in a cluster) for the other nodes on its controller listener through
// net/, and stops gracefully on SIGTERM: a controlled shutdown that moves
// its leaderships away, then finish and sync what is in flight, close.
//
// A node is a broker, a controller (a voter of the metadata quorum), or
// both (Kafka's process.roles; both by default). Without
// controller.quorum.voters it is a single node, the only voter, and needs
// no controller listener.
//
// It is the only place where the real world meets core: everything here is
// wiring, and any logic that could be wrong in an interesting way belongs in
// core/, where the simulator can test it.
//
// Start with Run (node.go), then Config (config.go).
package node
