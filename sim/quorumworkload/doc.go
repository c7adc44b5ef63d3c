// Package quorumworkload is the simulator's metadata quorum workload, run as
// `sluice sim --workload quorum`: three to five voters (and sometimes an
// observer), each a core/quorum.Quorum on its own sim.Machine with a
// simulated disk and a controller listener on the simulated network, under
// a nemesis that crashes and restarts nodes, cuts the power of every node at
// once, pauses nodes, partitions the network (the leader isolated, one-way
// cuts, a bridge, random splits), drifts clocks, and damages disks (torn
// writes, read corruption, failed fsyncs, a full or slow disk), and in half
// the seeds crashes a voter just after it granted a vote
// (crash_after_vote.go). A driver
// proposes records with unique values to whichever node leads. Each seed
// draws its own cluster and fault mix.
//
// A run has three phases: safety (traffic and faults), liveness (faults stop
// and every node comes up; a leader must lead within leaderBound, at most
// restart delay + 2 s of reconnect backoff + FetchTimeout + 10 election
// timeouts (measured: under 7 election timeouts over 600 seeds), and within
// livenessMax new proposals must commit and every node must have applied
// everything committed), and a final power cycle (every node crashes at
// once and restarts, half the time all at the same instant; the cluster
// must converge again, and everything acknowledged must still be there).
//
// What it checks, and the check name a failure reports:
//   - "leaders": at most one leader per epoch (every node reports when it
//     leads, with its epoch);
//   - "agreement": a record delivered (or acknowledged) at an offset is the
//     same everywhere and in every process lifetime;
//   - "order": each node delivers offsets in increasing order, and its
//     state (restored snapshot plus what it applied) is always a prefix of
//     the one committed sequence, with nothing skipped;
//   - "durability": every acknowledged record is still there after the
//     final power cycle, on every node;
//   - "liveness": the liveness or final phase did not converge in time;
//   - "panic": an assertion fired anywhere (core asserts its invariants).
//
// What it must never do: anything that makes a run other than a pure
// function of its seed (goroutines, the wall clock, map order reaching a
// decision), or reach into the quorum's internals: it sees what a node
// using the quorum sees (the CommitFunc, the Snapshotter, OnLeaderChange,
// Propose) and talks to nodes only over the simulated network.
//
// Start reading with Run (workload.go); settings.go draws a seed's
// configuration, node.go runs one node, listener.go is its controller
// listener, state.go its replicated state, driver.go makes the proposals,
// nemesis.go injects the faults (crash_after_vote.go the one aimed at
// votes), check.go judges. Planted bugs it must catch are in
// canaries.go; record.go keeps what a report draws when asked (crashes,
// faults, phases, the leader of each epoch) without changing the run.
package quorumworkload
