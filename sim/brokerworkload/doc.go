// Package brokerworkload is the simulator's single-broker workload, run as
// `sluice sim --workload broker`: one simulated Sluice node (core/broker on
// a sim.Machine), a topic of one to four partitions, one to three producers
// (idempotent or plain, acks=all or acks=1), one or two readers, and a
// consumer group of two or three consumers (dynamic or static members,
// range or round-robin assignment), all simclient clients recording a
// jepsen/history, under a nemesis that crashes and restarts the broker
// (sometimes right after a burst of writes), fails its fsyncs (the broker
// halts and is restarted), tears its unsynced writes, flips bits in its
// reads, fills and slows its disk, resets connections and crashes clients,
// and makes consumers leave, stall past their session timeout (zombies)
// and crash, sometimes crashing the broker while the group rebalances.
// Each seed draws its own mix, and about half the seeds switch on the
// BUGGIFY sites one broker can reach (buggify.go).
//
// A run has three phases: setup (the topic is auto-created through a
// Metadata request), safety (traffic and faults for 10-20 simulated
// seconds), and liveness (faults stop, the broker comes up, producers finish
// what is in flight, and a fresh reader drains every partition to its high
// watermark, all within livenessMax; then the group settles, every
// partition assigned once in one generation, and its committed offsets
// reach every partition's end, read back from the coordinator, within
// groupLivenessMax). Then jepsen/checker judges the history with
// FinalDrain set; the acks=1 producers are LossySenders, since a crash
// before the fsync may lose what acks=1 acknowledged (and an acks=all
// value beside theirs may not be lost). The
// group's own history (the sends and its consumers' operations) is judged
// again for values the group never polled.
//
// What a failure reports as its check: an anomaly class of jepsen/checker
// ("lost-write", "unseen", "duplicate", "inconsistent-offsets",
// "nonlinearizable-log", "nonlinearizable-committed-offset",
// "group-ownership", "stale-generation-commit", ...), with the findings
// naming op indexes; "group-unseen" and "group-lost-write" for values the
// group skipped; "inconclusive" when a linearizability search ran out of
// its budget (sim.RunOptions.SearchSteps);
// "liveness" and "group-liveness" when the liveness phase did not finish
// in time; "setup" and "broker-start" when the cluster never came up;
// "panic" for an assertion anywhere.
//
// What it must never do: anything that makes a run other than a pure
// function of its seed (goroutines, the wall clock, map order reaching a
// decision), or reach into the broker's internals: it talks to the broker
// only over the simulated network, as a Kafka client would.
//
// Start reading with Run (workload.go); settings.go draws a seed's
// configuration, node.go runs the broker machine, clients.go drives the
// producers and readers, nemesis.go injects the faults, liveness.go is the
// final phase and check.go judges the history. The consumer group has
// files of its own: group_settings.go, group_consumers.go,
// group_nemesis.go, group_liveness.go and group_check.go. Planted bugs it
// must catch are in canaries.go. record.go keeps what a report draws
// (sim.Recording) when asked: the node's crashes and starts, the faults,
// the phases and the checked history, without changing the run.
package brokerworkload
