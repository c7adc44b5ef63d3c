// Command sluice is Sluice's one binary: the broker and the cluster
// launcher (broker.go, cluster.go), the simulator's command line (sim.go),
// the black-box fault harness (jepsen.go), the load generator (bench.go)
// and small client tools (topic.go with topic_reassign.go, group.go,
// produce.go, consume.go, which share client_warnings.go). Each command
// registers itself in main.go's table; `sluice help` lists them. The command line only parses flags and wires packages
// together: what a command does lives in node/, sim/, jepsen/ and core/.
package main
