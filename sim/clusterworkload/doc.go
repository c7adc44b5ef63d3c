// Package clusterworkload is the simulator's cluster workload, run as
// `sluice sim --workload cluster` (the default): a Sluice cluster of three
// to five nodes, each a core/broker.Broker with both roles (a broker and a
// voter of the metadata quorum) on its own sim.Machine, replicated topics,
// and simulated Kafka clients (idempotent or plain producers with acks=all
// or acks=1, readers, a consumer group, and lag monitors reading its
// committed offsets), under the whole fault model:
// crashes and power loss of every node, pauses (the kernel freezes a
// process), network partitions of every shape, connection resets, clock
// jumps and drift, slow, full and failing disks, and client crashes and
// pauses. What a run does is a sim/scenario.Scenario: drawn from the seed
// (swarm testing) or read from a file under scenarios/.
//
// A run has three phases: setup (the admin client creates the topics with
// CreateTopics and waits for a leader on every partition), safety (the
// clients run while the nemesis applies the scenario's fault schedule,
// and an operator may add partitions to a topic, growth.go, delete a
// topic of its own and create it again, recreates.go, alter a topic's
// configs, alters.go, or run leader elections, elections.go),
// and liveness (every fault ends; within the scenario's bound every
// producer finishes, a fresh reader drains every partition to its high
// watermark, every group settles with each partition assigned once and
// committed to its end, every replica catches up, and every node lists
// every broker). Then the checks,
// the first failing one reported with op indexes or partitions:
//
//   - every anomaly of jepsen/checker on the whole history: lost-write,
//     unseen, duplicate, inconsistent-offsets, nonmonotonic-send,
//     poll-skip, nonmonotonic-poll, their internal forms, group-ownership,
//     stale-generation-commit, deleted-records-served (a read after a
//     DeleteRecords answer returned what it deleted; deletes.go),
//     nonlinearizable-log (a linearizability search per partition) and
//     nonlinearizable-committed-offset (per group and partition);
//     "inconclusive" when a search ran out of its budget
//     (sim.RunOptions.SearchSteps). Loss is
//     permitted, and counted, where the configuration allows it (acks=1,
//     page-cache topics once a machine lost its page cache, partitions a
//     controller elected a leader of outside the ISR while the topic
//     allowed it; see lossPermitted);
//   - "group-unseen" and "group-lost-write": values a group skipped;
//   - "replica-divergence": below the end the drain found, some replica's
//     log differs from another's, batch by batch;
//   - "deleted-topic-resurrected" and "recreated-topic-write-lost": a
//     replica of a recreated topic's last incarnation holds a record
//     acknowledged to a deleted one, or lacks one confirmed in it
//     (recreate_check.go);
//   - "config-not-applied": once converged, a live node describes an
//     altered topic's configs otherwise than the operator left them, or
//     otherwise than another node; "config-alter-refused": a valid
//     change was refused (alters.go); "elect-leaders-refused": an
//     ElectLeaders answer Kafka's controller never gives (elections.go);
//   - "reassignment-stuck": once converged, a partition reassignment is
//     still in progress, or the nodes describe the replicas apart;
//     "reassignment-not-applied": a partition's replicas are not the
//     target a controller last confirmed; "reassignment-refused": an
//     AlterPartitionReassignments answer Kafka's controller never gives
//     (reassigns.go);
//   - "unplaced-write": a Produce answer said a batch was written but gave
//     no offset, which no client can place (check.go);
//   - "leaders" and "partition-leaders": two nodes led the metadata quorum,
//     or one partition, in the same epoch (the observer, observer.go,
//     watches the nodes' logs);
//   - "liveness", "group-liveness", "replica-liveness", "broker-liveness"
//     (a node's Metadata leaves out a broker, brokers_listed.go): the
//     liveness phase did not converge in time; "setup"; "livelock";
//   - "panic": an assertion fired anywhere, core's included.
//
// What it must never do: anything that makes a run other than a pure
// function of its scenario (goroutines, the wall clock, map order reaching
// a decision), or reach into a broker: it talks to the nodes over the
// simulated network as clients do, reads their logs (the observer) and
// their disks (replica agreement) as an operator would, and crashes,
// pauses and cuts them through the simulator.
//
// Start reading with RunScenario (workload.go); node.go runs one node,
// setup.go and admin.go create the topics (growth.go adds partitions),
// clients.go drives the clients
// (offset_reader.go the lag monitors, deletes.go the operator deleting
// consumed records, recreates.go the operator deleting and creating a
// topic again, alters.go the operator altering a topic's configs,
// elections.go the operator running leader elections),
// nemesis.go and its nemesis_*.go files inject the faults, liveness.go and
// group_liveness.go are the final phase, check.go and replicas.go judge,
// observer.go watches the leaders. Planted bugs it must catch are in
// canaries.go, and bias.go leans the swarm toward the faults that expose
// each; profiles.go leans a fifth of the plain seeds the same ways.
package clusterworkload
