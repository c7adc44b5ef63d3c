package logworkload

import (
	"fmt"

	"sluice/core/batch"
)

// Lookups by timestamp (ListOffsets by time, and by max timestamp,
// KIP-734) go through each segment's time index and the max timestamp it
// tracks, which recovery takes from a trusted segment's index files
// rather than from its batches: their answers must be what a scan of the
// log's own batches gives ("time-lookup"). Checked now and then during a
// run and after every recovery, since a wrong entry recovery trusted (a
// torn time index: TestRecoveryNeverTrustsATornIndexFile in core/log)
// shows here and in no read.

// timeLookupsPerCheck is how many lookups by timestamp one check makes,
// besides one by max timestamp.
const timeLookupsPerCheck = 3

// timeLookups reads the whole log and checks lookups by timestamp in it.
func (r *run) timeLookups() *violation {
	if r.halted {
		return nil
	}
	r.counts.timeLookups++
	all, v := r.readAll("read-failed")
	if v != nil {
		return v
	}
	return r.checkTimeLookups(all)
}

// checkTimeLookups compares the log's lookups by timestamp with a scan of
// all, its batches from its start offset.
func (r *run) checkTimeLookups(all [][]byte) *violation {
	start, end := r.log.StartOffset(), r.log.EndOffset()
	headers := make([]batch.Header, len(all))
	for i, b := range all {
		headers[i], _ = batch.Parse(b)
	}
	for range timeLookupsPerCheck {
		// A batch's max timestamp, or one just either side of it: the
		// edges of "at or above".
		timestamp := r.machine.Clock.Now().UnixMilli()
		if len(headers) > 0 {
			timestamp = headers[r.rng.IntN(len(headers))].MaxTimestamp + r.rng.Int64N(3) - 1
		}
		got, found, err := r.log.OffsetForTimestamp(timestamp)
		if err != nil {
			return &violation{"time-lookup", fmt.Sprintf("OffsetForTimestamp(%d): %v", timestamp, err)}
		}
		wantFound, wantOffset, wantTimestamp := false, int64(0), int64(0)
		for _, h := range headers {
			// A batch compaction emptied has no record to answer with.
			if h.LastOffset() >= start && h.MaxTimestamp >= timestamp && h.RecordCount > 0 {
				wantFound, wantOffset, wantTimestamp = true, max(h.BaseOffset, start), h.MaxTimestamp
				break
			}
		}
		if found != wantFound || found && (got.Offset != wantOffset || got.Timestamp != wantTimestamp) {
			return &violation{"time-lookup", fmt.Sprintf("OffsetForTimestamp(%d) in [%d, %d) answered %d at %d (found %v), its batches say %d at %d (found %v)",
				timestamp, start, end, got.Offset, got.Timestamp, found, wantOffset, wantTimestamp, wantFound)}
		}
	}
	upTo := start + r.rng.Int64N(end-start+1)
	offset, timestamp, found, err := r.log.MaxTimestamp(upTo)
	if err != nil {
		return &violation{"time-lookup", fmt.Sprintf("MaxTimestamp(%d): %v", upTo, err)}
	}
	wantOffset, wantTimestamp := int64(-1), int64(-1)
	for _, h := range headers {
		if h.BaseOffset < upTo && h.LastOffset() >= start && h.MaxTimestamp > wantTimestamp {
			wantOffset, wantTimestamp = max(h.BaseOffset, start), h.MaxTimestamp
		}
	}
	if wantFound := wantOffset >= 0; found != wantFound || found && (offset != wantOffset || timestamp != wantTimestamp) {
		return &violation{"time-lookup", fmt.Sprintf("MaxTimestamp(%d) in [%d, %d) answered %d at %d (found %v), its batches say %d at %d (found %v)",
			upTo, start, end, offset, timestamp, found, wantOffset, wantTimestamp, wantFound)}
	}
	return nil
}
