// Package logworkload is the simulator's storage workload: one machine, one
// partition log (core/log) on a simulated disk, and a seeded stream of
// appends, reads, syncs, truncations, restarts (TruncateFullyAndStartAt, as
// a follower restarts its log), retention, compaction, crashes and
// disk faults, each checked against a model of what the log must hold.
// About half the seeds also switch on core/log's BUGGIFY sites (small-chunk
// reads, delayed sync rounds; buggify.go), at chances of their own.
//
// It owns the model and the checks; it must never reach into the log's
// internals (it uses the exported API only, as the broker will) and, like
// everything in the simulator, it must stay a pure function of its seed: no
// goroutines, no wall clock, no map order reaching a decision.
//
// What a run checks, by the name a failure reports:
//   - "synced-lost": after a crash, a batch below the SyncedOffset the log
//     reported before the crash is missing or different.
//   - "resurrected": the recovered log is not a batch-aligned prefix of a
//     state the log passed through since the last completed sync began
//     (a truncation may be undone by a crash only if no sync covered it).
//   - "start-offset": the recovered start offset is outside what the last
//     completed sync and the later changes allow.
//   - "recovery-kept-corrupt": after recovery, a batch the log holds fails
//     its checks on read: recovery kept bytes it should have cut.
//   - "corrupt-served", "read-mismatch", "read-failed": a read returned
//     bytes that fail their CRC, bytes other than the model's, or an error.
//   - "offsets": appends were not given dense, increasing offsets, or the
//     log's start and end disagree with the model.
//   - "epochs": the leader epoch cache disagrees with the batches.
//   - "open-failed", "panic": the log could not be opened, or asserted.
//   - In seeds that compact (one in three, see compaction.go):
//     "compaction-mangled", "compaction-lost", "tombstone-resurrected",
//     "compaction-failed"; and the checks above compare batches as
//     compaction may have rewritten them.
//
// Start reading with Run (workload.go), then the operations it draws
// (operations.go); settings.go draws the run's
// configuration from the seed; model.go is what the checks compare against;
// record.go keeps what a report draws, when asked.
package logworkload
