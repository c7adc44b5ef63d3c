// Package checker judges histories recorded by jepsen/history: Jepsen's
// Kafka anomaly classes, and linearizability checks (porcupine's models,
// searched by this package) of each partition's log and each consumer
// group's committed offsets.
//
// What it owns:
//   - The anomaly definitions (anomaly.go): one constant per class, with
//     the exact rule that flags it. The names and meanings are those of
//     Jepsen's Kafka test (jepsen.tests.kafka), adapted to this history
//     format.
//   - One checker per file, each callable alone (check.go lists them):
//     lost_write.go (lost-write and unseen), duplicate.go,
//     inconsistent_offsets.go, nonmonotonic_send.go, poll_order.go
//     (poll-skip, nonmonotonic-poll), internal_poll_order.go,
//     aborted_read.go, group_ownership.go, stale_generation_commit.go,
//     and the linearizability checks
//     log_linearizability.go and committed_offsets.go.
//   - The linearizability side: search.go runs one search and
//     explains a failure, by quick_search.go (the fast path) and then
//     deciding_search.go (the verdict, within a budget of steps);
//     log_model.go is the partition log's sequential
//     specification, over the persistent log of log_state.go, and
//     log_search.go turns a partition's history into its operations;
//     visualize.go writes porcupine's HTML page for one partition.
//   - What the configuration permits (Options): where loss is allowed or
//     retention deleted records, a finding that is what loss or deletion
//     looks like is reported as permitted, not failed. The subtlest case
//     is an idempotent retry written again after its first copy was
//     deleted, and the producer's state with it (Kafka's leader accepts
//     such a retry too): duplicate.go permits it when a poll saw the first
//     copy, and log_linearizability.go searches again with each copy a
//     poll saw at its offset and, for copies nobody saw, one extra copy
//     per send allowed below the log start
//     (logSearchWithDeletedCopies).
//   - Report (report.go): per class a count and a few examples naming the
//     ops involved, a verdict, and a stable text rendering for traces and
//     the command line.
//
// What it must never do: let anything but its input decide its output.
// Findings are sorted before they are reported and no map order reaches
// them, because the simulator prints verdicts into traces it hashes. That
// holds for the linearizability searches too: their budget is counted in
// steps and bytes, not time, so a search that runs out does so on every
// machine, and is reported as inconclusive (Unknown), never as a pass,
// and never silently.
//
// Cost: every checker but the linearizability ones is linear or n log n
// in the history's size. Their search is exponential in the worst case,
// which is what its budget (Options.SearchSteps) is for.
//
// Start reading with Check (check.go), then analysis.go, which indexes a
// history once for all checkers, then any one checker.
package checker
