// Package ports picks loopback ports for the broker processes the fault
// harness and the client tests start.
//
// A port is picked free and released, and the broker binds it a moment
// later. When it comes from the kernel's ephemeral range, any of the many
// client connections the tests open meanwhile (or after a kill -9, before
// the restart) can take it as its local port, and the broker cannot
// start. Ports here come from below that range, where the kernel hands
// out none; the rest of the race (another test process picking the same
// port in the same instant) is left to a random pick among thousands.
// Start with Loopback.
package ports
