// Package harness is the black-box fault harness: it runs real sluice
// processes on loopback, drives them with real Kafka clients (franz-go's
// kgo) while a nemesis injects faults, records what the clients were told
// as a jepsen/history, judges it with the same jepsen/checker the
// simulator uses, and writes a results folder a person reads at a glance.
// `sluice jepsen` and `make jepsen` run it; jepsen/compat's cluster tests
// use its cluster launcher.
//
// How the network faults work. Every node listens on two private
// loopback ports (clients, controllers) and has a proxy in front of each
// (proxy.go). A node advertises its client proxy, and every node's voter
// list names the controller proxies, so every byte between two nodes, or
// between a client and a node, crosses a proxy: replication fetches,
// the metadata quorum, heartbeats, produce and fetch alike. A node's
// advertised address is one for everybody, so a proxy cannot tell who is
// calling from the address; it asks the kernel instead (identify_linux.go:
// the connecting socket's inode in /proc/net/tcp, and which node process
// holds it in /proc/PID/fd). That makes each connection belong to a pair
// of directed links (from, to), and Links (links.go) says what each link
// does: pass, stall (bytes held, delivered late on heal), reset
// (connections broken, new ones refused), with an optional delay. A
// partition is then exact, per direction, without root, network
// namespaces or iptables; TestPartitionCutsReplicationAndQuorum shows a
// cut stops replication and the quorum alike. Outside Linux every
// connection counts as a client's and partitions are skipped.
//
// What it owns:
//   - the cluster (cluster.go, process.go, health.go): start, kill -9,
//     SIGSTOP/SIGCONT, SIGTERM and restart of nodes with the same flags
//     and data; the observer's view of each node (Metadata, DescribeQuorum
//     straight to the node, around the proxies); waiting for a healthy
//     cluster (every partition led, every ISR full);
//   - the nemesis (nemesis.go): kill, pause, partition, rolling restart,
//     full-cluster kill, slow links, cut clients, and strand (the unclean
//     election setup), leaders preferred, each recorded as a fault window;
//   - the workload (workload.go, producer.go, assign_consumer.go,
//     group_consumer.go, committed_reader.go, drain.go): kgo producers
//     (acks=all or 1, idempotent or not), a consumer by assignment,
//     a consumer group with manual commits, reads of the committed
//     offsets, and the final read of every partition to its end, all
//     recorded through one history (record.go);
//   - the run (run.go): phases, liveness after recovery, judging with
//     checker.Check, and the results folder (results.go, plot.go):
//     verdict.txt, history.jsonl, faults.json, report.html (SVG plots of
//     latency and throughput with fault windows shaded, no script, nothing
//     fetched), porcupine pages of partitions that fail, nodes' logs;
//   - the power check (power.go): configurations that permit loss must
//     show it, the one that does not must not.
//
// What it must never do: reach into core/ or any broker internals. It is
// a client: it knows what the wire, the processes' exit statuses and
// their logs tell it. Unlike core/ and sim/ it is not deterministic (real
// processes, real time); the seed fixes the nemesis's choices and the
// reassigner's draws only.
//
// Start reading with Run (run.go), then Cluster (cluster.go) and the
// proxy (proxy.go, links.go), then the nemesis and the clients.
package harness
