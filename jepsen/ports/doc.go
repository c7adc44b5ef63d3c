// Package ports picks loopback ports for the broker processes the fault
// harness and the client tests start.
//
// A port is picked free and released, and the broker binds it a moment
// later. When it comes from the kernel's ephemeral range, any of the many
// client connections the tests open meanwhile (or after a kill -9, before
// the restart) can take it as its local port, and the broker cannot
// start. Ports here come from below that range, where the kernel hands
// out none.
//
// The other half of the race is another test process: go test runs
// packages in parallel, and each starts brokers. A port one process
// handed out is free whenever its broker is down (before it starts, and
// between a kill -9 and the restart on the same port), and another
// process's pick would find it free and take it. So every port handed
// out is also claimed, for the life of the process, by a flock on a lock
// file in a directory all of this user's processes share (claim_unix.go);
// other processes skip claimed ports. Start with Loopback.
package ports
