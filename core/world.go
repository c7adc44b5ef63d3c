package core

import "log/slog"

// World is everything a node's logic may use to affect or observe the outside.
// A node receives one World when it starts and keeps it until it crashes or
// stops; a restarted node gets a fresh World over the same disk.
type World struct {
	Clock   Clock
	FS      FS
	Net     Network
	Entropy Entropy

	// Log receives structured events. In production it writes log/slog
	// output; in the simulator it feeds the run's trace, so what core logs
	// is part of what a seed must reproduce.
	Log *slog.Logger

	// Events receives the few lines that tell the cluster's story, which
	// an operator (or the simulator's observer) follows even when other
	// info lines are not kept: a metadata quorum or partition leadership
	// won, a metadata snapshot taken, downloaded or restored, a
	// compaction that removed records, a reassignment completed, leaders
	// moved back to their preferred replicas, an unclean election. Core
	// logs them with the same messages, levels and attributes as it
	// would on Log; nil means Log (see EventLog). Apart from Log, a
	// handler can keep these at info while Log keeps warnings only, and
	// the some 200 other info records a simulated seed logs are then
	// never built (slog builds an enabled record, caller's stack
	// included, before a handler can drop it).
	Events *slog.Logger

	// Halt stops the node at once, as a crash would: no further callbacks
	// run and unsynced writes may be lost. Core calls it when continuing
	// would risk acknowledged data, such as after a failed fsync, whose
	// dirty pages the kernel may already have dropped (PostgreSQL's
	// "fsyncgate"). The process exits in production; the simulator crashes
	// the node and may restart it later.
	Halt func(reason error)

	// Buggify switches on fault-injection sites in core (shortened
	// timeouts, forced short reads, delayed syncs). It is nil in
	// production, which switches every site off.
	Buggify *Buggify

	// Canaries plants known bugs for the simulator to find; nil in
	// production.
	Canaries *Canaries

	// Codecs decompresses and recompresses batch records for the features
	// that must look inside compressed batches (log compaction, the key
	// check of compacted topics, lookups by timestamp). The production
	// node and the simulator both set it (node/codecs). Nil means
	// uncompressed only: those features leave compressed batches intact.
	Codecs Codecs
}

// EventLog is the logger of the lines Events describes: Events, or Log
// when Events is nil.
func (w *World) EventLog() *slog.Logger {
	if w.Events != nil {
		return w.Events
	}
	return w.Log
}
