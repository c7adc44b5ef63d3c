package logworkload

import (
	"bytes"
	"fmt"
	"slices"
)

// A restart (TruncateFullyAndStartAt) is durable once a checkpoint records
// its start. A crash before that sends recovery back to the older start,
// and the old log must be there as it was synced: a follower in the ISR
// that came back empty below the end it had reported could be elected and
// write again at offsets already acknowledged (cluster seed 2985856). The
// model holds the log to that where it can tell what the restart keeps
// without knowing the segments: a restart at or beyond the end cuts
// nothing, so every batch synced before it must survive such a crash.
//
// The log keeps nothing while a truncation is not yet durable (a kept file
// could bring back what the cut removed), so the promise is made only when
// a sync round that began after the last operation that may have cut the
// log's files has completed.

// restartPromise is what a restart promised to keep until its checkpoint.
type restartPromise struct {
	offset int64 // the restart's start
	// batches were synced, at or above the log's start, when it restarted.
	batches []modelBatch
}

// promiseAtRestart is what a restart at offset promises, nil if nothing:
// a restart inside the log, or one while a cut may not be durable yet.
func (r *run) promiseAtRestart(offset int64) *restartPromise {
	m := &r.model
	if offset < m.end || r.log.SyncStats().RoundsCompleted <= r.cutRounds {
		return nil
	}
	synced := r.log.SyncedOffset()
	p := &restartPromise{offset: offset}
	for _, b := range m.batches {
		if b.last >= m.start && b.last < synced {
			p.batches = append(p.batches, b)
		}
	}
	return p
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
		if b.last < start {
			continue
		}
		if !slices.ContainsFunc(recovered, func(got []byte) bool { return bytes.Equal(got, b.bytes) }) {
			return &violation{"synced-lost", fmt.Sprintf("batch [%d, %d] was synced when the log restarted at %d, at or beyond its end, and no checkpoint recorded the restart; recovered [%d, %d) without it", b.base, b.last, p.offset, start, end)}
		}
	}
	return nil
}
