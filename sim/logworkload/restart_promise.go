package logworkload

import (
	"bytes"
	"fmt"
	"slices"
)

// A restart (TruncateFullyAndStartAt) is durable once a checkpoint records
// its start. A crash before that sends recovery back to the older start,
// and the old log must be there as it was synced below the restart's
// start: a follower in the ISR that came back empty below the end it had
// reported could be elected and write again at offsets already
// acknowledged (cluster seeds 2985856, restarted at its end, and 72609,
// inside its log). So every batch synced before the restart and wholly
// below its start must survive such a crash. In a compaction seed (whose
// restarts start at or above what compaction may have used) a batch
// compaction may have touched need not survive byte for byte, but each
// key's latest record among those batches must, as compaction promises:
// a restart inside a segment a compaction swap has not finished putting
// on disk waits for the swap (ErrSwapNotFinished), since it could keep
// neither the old segments nor the new one.
//
// While a cut of the log's files is not yet durable, a kept file could
// come back with the cut undone, so the log refuses such a restart
// (ErrTruncationNotDurable) until a round that began after the cut has
// completed; the model takes a refusal only then (mayRefuseRestart), and
// one for a swap only until a round begun after the last compaction step
// has completed (maySwapBeUnfinished).

// restartPromise is what a restart promised to keep until its checkpoint.
type restartPromise struct {
	offset int64 // the restart's start
	// batches were synced, at or above the log's start, when it restarted.
	batches []modelBatch
}

// promiseAtRestart is what a restart at offset promises.
func (r *run) promiseAtRestart(offset int64) *restartPromise {
	m := &r.model
	synced := r.log.SyncedOffset()
	p := &restartPromise{offset: offset}
	for _, b := range m.batches {
		if b.last >= m.start && b.last < synced && b.last < offset {
			p.batches = append(p.batches, b)
		}
	}
	return p
}

// mayRefuseRestart reports whether the log may refuse a restart for a cut
// not yet durable: no round begun after the last possible cut has
// completed.
func (r *run) mayRefuseRestart() bool {
	return r.log.SyncStats().RoundsCompleted <= r.cutRounds
}

// maySwapBeUnfinished reports whether a compaction swap may wait for a
// round: none begun after the last compaction step has completed.
func (r *run) maySwapBeUnfinished() bool {
	return r.log.SyncStats().RoundsCompleted <= r.swapRounds
}

// notePossibleCut records that the log's files may have been cut: its
// truncation fence holds until a round begun after now completes.
func (r *run) notePossibleCut() {
	r.cutRounds = r.log.SyncStats().RoundsStarted
}

// checkRestartPromise checks a recovered log against the last restart's
// promise, when the crash sent recovery back below the restart's start.
func (r *run) checkRestartPromise(recovered [][]byte, start, end int64) *violation {
	p := r.promise
	if p == nil || start >= p.offset {
		return nil
	}
	for _, b := range p.batches {
		if b.last < start || b.last < r.compactedBelow && r.settings.compaction.on {
			continue
		}
		if !slices.ContainsFunc(recovered, func(got []byte) bool { return bytes.Equal(got, b.bytes) }) {
			return &violation{"synced-lost", fmt.Sprintf("batch [%d, %d] was synced when the log restarted at %d, above it, and no checkpoint recorded the restart; recovered [%d, %d) without it", b.base, b.last, p.offset, start, end)}
		}
	}
	if r.settings.compaction.on {
		if v := checkKeys(r.codecs, recovered, p.batches, start, p.offset); v != nil {
			v.check = "synced-lost"
			v.detail = fmt.Sprintf("of the batches synced when the log restarted at %d, with no checkpoint recording the restart: %s", p.offset, v.detail)
			return v
		}
	}
	return nil
}
