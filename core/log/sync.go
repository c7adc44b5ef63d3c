package log

import (
	"fmt"

	"sluice/core"
)

// A sync round is one group commit. It syncs every file that changed since
// the previous round began (dirty segments, index files of segments that
// rolled, the directory when names were created or removed); when all of
// them have completed, it replaces on disk the segments compaction has
// rewritten since (see compaction_swap.go), then writes the checkpoint if
// that is due (see below); then it moves SyncedOffset up to the end offset
// the log had when the round began. One round is in flight at a time;
// whatever changes meanwhile is covered by the next one, which starts as
// soon as this one completes if anything is dirty.
//
// The checkpoint comes last, after the data it vouches for is durable, so
// that even a round that fails halfway cannot leave a checkpoint, or a
// directory entry made durable by the checkpoint's directory sync, ahead of
// data or names an earlier failed sync dropped.
//
// A failed sync means the kernel may already have dropped the dirty pages
// it covered (PostgreSQL's "fsyncgate"), so no later sync can promise them:
// the log halts the node, which restarts and recovers from what the disk
// really holds.
type syncRound struct {
	number uint64 // rounds are numbered from 1 in the order they begin

	// endOffset is what SyncedOffset becomes when the round completes:
	// the end offset when it began, lowered by any truncation since, whose
	// cut the round does not cover.
	endOffset int64

	pending int
	err     error
	// done is what each of the round's operations calls when it
	// completes (completeOne for this round): made once per round, not
	// once per step that issues operations. It names the round by its
	// number, so that a completion that comes twice, or for a round no
	// longer in flight, is caught although rounds share one syncRound.
	done func(err error)

	// step is what the round is waiting for; each completes when pending
	// drops to zero.
	step roundStep

	// swaps are the compaction swaps this round completes.
	swaps []*segmentSwap

	// checkpoint is the checkpoint the round wrote, or nil.
	checkpoint *checkpoint
	// checkpointSkipped: a checkpoint was due but could not be written
	// (a full disk); the round does not start another just to retry it.
	checkpointSkipped bool
}

// roundStep is where a round is: each step's operations run, and the
// next step begins once all of them have completed.
type roundStep int

const (
	stepSyncFiles roundStep = iota
	stepCommitSwaps
	stepFinishSwaps
	stepCheckpoint
)

// Sync starts a sync round if none is in flight and anything is dirty, and
// otherwise does nothing: a round in flight is followed by another when it
// completes if changes arrived meanwhile. SyncedOffset advances, and
// OnSynced functions are called, when a round completes.
func (l *Log) Sync() {
	if l.failure != nil || l.round != nil || l.roundDelayed || !l.dirty() {
		return
	}
	l.beginRound()
}

// beginRound starts a round now or, when BUGGIFY says so, a little later:
// the group commit then waits a few milliseconds for more appends to pile
// up behind one fsync. That is legal because nothing is durable until a
// round completes, and a round only covers what the log held when it
// began, so waiting longer to begin delays acknowledgements and never
// claims more than the disk holds. Production (a nil Buggify) always
// starts at once.
func (l *Log) beginRound() {
	if !l.world.Buggify.Hit(core.BuggifyLogSyncDelayed) {
		l.startRound()
		return
	}
	l.roundDelayed = true
	delay := core.RandomDuration(l.world.Entropy, syncDelayBuggifyMin, syncDelayBuggifyMax)
	l.world.Clock.AfterFunc(delay, func() {
		l.roundDelayed = false
		if l.failure != nil {
			return // closed or halted meanwhile: a halted node recovers instead
		}
		if l.round != nil {
			panic("log: a sync round began while one was delayed")
		}
		if !l.dirty() {
			// Nothing is left to sync (the files were dealt with while
			// the round waited): every change so far is durable.
			l.completeDurableWaiters(l.syncStats.RoundsStarted + 1)
			return
		}
		l.startRound()
	})
}

// durableWaiter is a WhenDurable call waiting for a sync round.
type durableWaiter struct {
	round uint64
	done  func()
}

// WhenDurable calls done, on a later turn of the loop, once every change
// made to the log before the call — appends, truncations, a moved start —
// is durable: when a sync round that covers them has completed. It starts
// that round if none is under way. done never runs if the log halts or
// closes first (a halted node restarts and recovers instead).
func (l *Log) WhenDurable(done func()) {
	if l.failure != nil {
		return
	}
	target := l.syncStats.RoundsStarted + 1 // the next round to begin
	switch {
	case l.round != nil && !l.dirty():
		target = l.round.number // the round under way covers everything
	case l.round == nil && !l.dirty():
		l.world.Clock.AfterFunc(0, func() {
			if l.failure == nil {
				done()
			}
		})
		return
	}
	l.durableWaiters = append(l.durableWaiters, durableWaiter{round: target, done: done})
	l.Sync()
}

// completeDurableWaiters runs the WhenDurable calls a finished round
// covers, in the order they were made.
func (l *Log) completeDurableWaiters(finished uint64) {
	ready := 0
	for ready < len(l.durableWaiters) && l.durableWaiters[ready].round <= finished {
		ready++
	}
	if ready == 0 {
		return
	}
	waiting := l.durableWaiters[:ready]
	l.durableWaiters = l.durableWaiters[ready:]
	for _, w := range waiting {
		w.done()
	}
}

// dirty reports whether anything is not yet durable.
func (l *Log) dirty() bool { return l.filesDirty() || l.checkpointDue(l.endOffset) }

// filesDirty reports whether any file or directory changed since the last
// round began.
func (l *Log) filesDirty() bool {
	if l.directoryDirty || len(l.directoriesToSync) > 0 || len(l.filesToSync) > 0 || l.swapsWaiting() {
		return true
	}
	for _, s := range l.segments {
		if s.dirty {
			return true
		}
	}
	return false
}

func (l *Log) startRound() {
	if l.round != nil {
		panic(fmt.Sprintf("log: sync round %d began while round %d was under way", l.syncStats.RoundsStarted+1, l.round.number))
	}
	l.syncStats.RoundsStarted++
	// The log's own syncRound, reset: one round is in flight at a time,
	// and allocating one for each round showed in the simulator's
	// profile (a round follows nearly every append).
	number := l.syncStats.RoundsStarted
	l.roundState = syncRound{endOffset: l.endOffset, number: number}
	round := &l.roundState
	l.round = round
	round.done = func(err error) { l.completeOne(l.roundNumbered(number), err) }
	done := round.done

	// Count every operation before issuing any, so that no completion can
	// find the round finished while it is still being started.
	var segments []*segment
	for _, s := range l.segments {
		if s.dirty {
			s.dirty = false
			segments = append(segments, s)
		}
	}
	files := l.filesToSync
	l.filesToSync = nil
	directories := l.directoriesToSync
	l.directoriesToSync = nil
	if l.directoryDirty {
		l.directoryDirty = false
		directories = append(directories, l.dir)
	}
	l.takeSwaps(round)
	round.pending = len(segments) + len(files) + len(directories) + 1

	for _, s := range segments {
		s.file.Sync(done)
	}
	for _, f := range files {
		f.Sync(func(err error) {
			f.Close()
			done(err)
		})
	}
	for _, directory := range directories {
		l.world.FS.SyncDir(directory, done)
	}
	if l.world.Canaries.On(CanarySyncedBeforeDurable) {
		// The planted bug: promise durability when the sync is issued.
		l.advanceSynced(round.endOffset)
	}
	// Release the extra count taken above. If every file sync completed
	// already (they never complete inside the call, but a round with no
	// files has none), this moves on to the checkpoint.
	l.completeOne(round, nil)
}

// roundNumbered is the round in flight, which must be round number.
func (l *Log) roundNumbered(number uint64) *syncRound {
	if l.round == nil || l.round.number != number {
		panic("log: sync round completed twice")
	}
	return l.round
}

// completeOne is called once per finished operation of round.
func (l *Log) completeOne(round *syncRound, err error) {
	if err != nil && round.err == nil {
		round.err = err
	}
	round.pending--
	if round.pending > 0 {
		return
	}
	if round.pending < 0 || l.round != round {
		panic("log: sync round completed twice")
	}
	// Each step either issues operations, whose completions come back
	// here, or has nothing to do and falls through to the next.
	for round.pending == 0 {
		if l.failure != nil {
			l.round = nil
			return // closed or halted meanwhile: report nothing
		}
		if round.err != nil {
			l.round = nil
			l.halt(fmt.Errorf("log: sync failed, unsynced writes may be lost: %w", round.err))
			return
		}
		switch round.step {
		case stepSyncFiles:
			round.step = stepCommitSwaps
			l.commitSwaps(round)
		case stepCommitSwaps:
			round.step = stepFinishSwaps
			l.finishSwaps(round)
		case stepFinishSwaps:
			round.step = stepCheckpoint
			if l.checkpointDue(round.endOffset) {
				l.writeCheckpoint(round)
			}
		case stepCheckpoint:
			l.finishRound(round)
			return
		}
	}
}

// scheduleCheckpointRetry begins a round after checkpointRetryDelay when
// a checkpoint is still due then and something depends on it: appends the
// log refuses until it is durable (fenced), WhenDurable callers, or a moved
// log start, which counts only once durable (a follower reports its
// durable start, and rejoins the ISR, or lets a leader answer a
// DeleteRecords, only once it reaches the leader's). Without it, a
// follower whose truncation's checkpoint met a full disk would hold its
// records for a round nobody begins, and never fetch again; and one whose
// start move met it would stay out of the ISR for good once the writes
// stopped. One retry is scheduled at a time; a round that fails to write
// the checkpoint again schedules the next.
func (l *Log) scheduleCheckpointRetry() {
	if l.checkpointRetryScheduled {
		return
	}
	l.checkpointRetryScheduled = true
	l.world.Clock.AfterFunc(checkpointRetryDelay, func() {
		l.checkpointRetryScheduled = false
		if l.failure != nil || (!l.fenced() && len(l.durableWaiters) == 0 && l.DurableStartOffset() >= l.startOffset) {
			return
		}
		l.Sync()
	})
}

// recordsRestart reports whether c, durable now, sends recovery to the
// last restart's start or past it. Any checkpoint written since the
// restart does (the start only moves forward); the one on its way to disk
// when the restart came speaks for the log as it was, perhaps at an older
// restart's start beyond this one, and does only if its start is this one.
func (l *Log) recordsRestart(c *checkpoint) bool {
	if c == l.checkpointBeforeRestart {
		return c.startOffset == l.restartedStart
	}
	return c.startOffset >= l.restartedStart
}

// finishRound records a round that completed without error. What it needs
// of round after telling the OnSynced functions it copies first: one of
// them may begin the next round, which reuses the syncRound.
func (l *Log) finishRound(round *syncRound) {
	number, checkpointSkipped := round.number, round.checkpointSkipped
	l.round = nil
	l.syncStats.RoundsCompleted++
	if round.number > l.truncationRound {
		l.truncationPending = false
	}
	if round.checkpoint != nil {
		l.checkpointDurable = round.checkpoint
		l.syncStats.CheckpointRound = round.number
		l.removeCondemned(round.checkpoint.startOffset)
		if l.restartedStart >= 0 && l.recordsRestart(round.checkpoint) {
			l.restartedStart = -1
			l.removeRestartLeftovers()
		}
	}
	l.checkpointWriting = nil
	l.checkpointBeforeRestart = nil
	l.advanceSynced(round.endOffset)
	// The round's waiters are told, unless a full disk refused the
	// round's checkpoint: a truncation or a moved start lives in the
	// checkpoint, and is not durable before it is. They wait for a round
	// that writes one (appends' waiters too, which could do without it:
	// on a full disk, appends fail anyway). Telling them anyway broke
	// durability, and a waiter that appended and waited again was told
	// again inside the round its wait began, without end.
	completeWaiters := func(finished uint64) {
		if !checkpointSkipped {
			l.completeDurableWaiters(finished)
		}
	}
	if l.roundTakenOver() {
		// An OnSynced function started (or delayed) a round, or closed
		// the log.
		completeWaiters(number)
		return
	}
	if l.filesDirty() || (l.checkpointDue(l.endOffset) && !checkpointSkipped) {
		completeWaiters(number)
		// A waiter may have done the same: a follower's records held
		// behind a truncation append and sync as soon as it is
		// durable. Beginning another round over theirs would orphan
		// its syncs.
		if !l.roundTakenOver() {
			l.beginRound()
		}
		return
	}
	if l.dirty() {
		// A checkpoint is due but could not be written (a full disk):
		// whatever needs it waits for a later round, which the log
		// begins itself after a while if nobody else does.
		completeWaiters(number)
		l.scheduleCheckpointRetry()
		return
	}
	// Nothing is left to sync: every change so far is durable, whatever
	// round a waiter expected to need.
	l.completeDurableWaiters(l.syncStats.RoundsStarted + 1)
}

// roundTakenOver reports whether, since a round finished, something it
// called back (an OnSynced function, a WhenDurable waiter) began or
// delayed the next round, or closed the log: the finishing round must not
// begin one then.
func (l *Log) roundTakenOver() bool { return l.round != nil || l.roundDelayed || l.failure != nil }

// advanceSynced raises SyncedOffset to target if that is higher, and tells
// the OnSynced functions.
func (l *Log) advanceSynced(target int64) {
	if target > l.endOffset {
		panic(fmt.Sprintf("log: synced offset %d would pass the end %d", target, l.endOffset))
	}
	if target <= l.syncedOffset {
		return
	}
	l.syncedOffset = target
	for _, f := range l.onSynced {
		f(target)
	}
}

// lowerSynced is called when the log is cut at end: nothing at or above it
// is durable any more, and a round in flight must not claim it.
func (l *Log) lowerSynced(end int64) {
	l.syncedOffset = min(l.syncedOffset, end)
	if l.round != nil {
		l.round.endOffset = min(l.round.endOffset, end)
	}
}
