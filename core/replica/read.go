package replica

import (
	"github.com/twmb/franz-go/pkg/kerr"

	"sluice/core/batch"
	corelog "sluice/core/log"
)

// ReadResult is one partition's part of a fetch answer.
type ReadResult struct {
	Records        []byte
	HighWatermark  int64
	LogStartOffset int64
	LogEndOffset   int64
}

// Read serves a consumer: whole batches from offset, below the high
// watermark (consumers never see what could still be lost), at most
// maxBytes unless atLeastOne and the first batch alone is bigger (KIP-74).
// currentLeaderEpoch, when not -1, fences a client whose metadata is stale
// (KIP-320): an older epoch gets FENCED_LEADER_EPOCH, a newer one
// UNKNOWN_LEADER_EPOCH.
func (p *Partition) Read(offset int64, maxBytes int, atLeastOne bool, currentLeaderEpoch int32) (ReadResult, error) {
	result := ReadResult{HighWatermark: p.highWatermark, LogStartOffset: p.log.StartOffset(), LogEndOffset: p.log.EndOffset()}
	if err := p.checkLeaderEpoch(currentLeaderEpoch); err != nil {
		return result, err
	}
	if !p.IsLeader() {
		return result, kerr.NotLeaderForPartition
	}
	if offset < p.log.StartOffset() || offset > p.log.EndOffset() {
		return result, kerr.OffsetOutOfRange
	}
	limit := p.highWatermark
	if p.w.Canaries.On(CanaryReadAboveHighWatermark) {
		limit = p.log.EndOffset()
	}
	if offset >= limit {
		// Between the high watermark and the log end the records exist
		// but are not committed yet: as Kafka does, answer nothing
		// rather than out of range, so a consumer whose position a new
		// leader has not caught up with just waits.
		return result, nil
	}
	records, err := p.log.Read(offset, limit, maxBytes, atLeastOne)
	if err != nil {
		p.logger.Warn("read failed", "offset", offset, "error", err)
		return result, kafkaError(err)
	}
	result.Records = records
	return result, nil
}

// ReadLog returns whole batches of this replica's log from offset, up to
// its log end, whatever its role and its high watermark: for checks that
// replicas agree (below the high watermark every replica's log is the
// same) and for tools, never for serving clients.
func (p *Partition) ReadLog(offset int64, maxBytes int) ([]byte, error) {
	records, err := p.log.Read(offset, p.log.EndOffset(), maxBytes, true)
	return records, kafkaError(err)
}

// checkLeaderEpoch applies KIP-320's fencing of a request that names the
// leader epoch it believes current.
func (p *Partition) checkLeaderEpoch(currentLeaderEpoch int32) error {
	switch {
	case currentLeaderEpoch < 0:
		return nil
	case currentLeaderEpoch < p.leaderEpoch:
		return kerr.FencedLeaderEpoch
	case currentLeaderEpoch > p.leaderEpoch:
		return kerr.UnknownLeaderEpoch
	}
	return nil
}

// Special timestamps of ListOffsets.
const (
	TimestampLatest       = -1
	TimestampEarliest     = -2
	TimestampMaxTimestamp = -3
	// With no tiered storage, the earliest local offset is the earliest
	// offset, and nothing is tiered: Kafka answers -1 with epoch -1
	// (UnifiedLog.fetchOffsetByTimestamp). KIP-405's specs, v8 and v9.
	TimestampEarliestLocal = -4
	TimestampLatestTiered  = -5
)

// OffsetForTimestamp answers ListOffsets for one partition: the earliest
// offset, the latest (the high watermark: consumers cannot read past it;
// OFFSET_NOT_AVAILABLE while a new leader's has not caught up),
// the offset of the record with the largest timestamp (KIP-734), or the
// first offset whose timestamp is at or after timestamp (-1 if none, or
// OFFSET_NOT_AVAILABLE while the high watermark lags).
func (p *Partition) OffsetForTimestamp(timestamp int64, currentLeaderEpoch int32) (offset, foundTimestamp int64, err error) {
	if err := p.checkLeaderEpoch(currentLeaderEpoch); err != nil {
		return -1, -1, err
	}
	if !p.IsLeader() {
		return -1, -1, kerr.NotLeaderForPartition
	}
	// A new leader whose high watermark has not reached the start of its
	// epoch would answer "latest" below what the previous leader
	// answered, and "no such record" for a record its predecessor exposed:
	// Kafka says OFFSET_NOT_AVAILABLE, which clients retry, for the
	// latest offset and for a lookup that finds nothing below the high
	// watermark (Partition.fetchOffsetForTimestamp's maybeOffsetsError).
	lagging := p.epochStartOffset > p.highWatermark
	switch timestamp {
	case TimestampLatest:
		if lagging {
			return -1, -1, kerr.OffsetNotAvailable
		}
		return p.highWatermark, -1, nil
	case TimestampEarliest, TimestampEarliestLocal:
		return p.log.StartOffset(), -1, nil
	case TimestampLatestTiered:
		return -1, -1, nil
	case TimestampMaxTimestamp:
		offset, found, err := p.maxTimestampOffset()
		if err == nil && offset < 0 && lagging {
			return -1, -1, kerr.OffsetNotAvailable
		}
		return offset, found, err
	}
	for from := p.log.StartOffset(); ; {
		answer, found, err := p.log.OffsetForTimestampFrom(timestamp, from)
		if err != nil {
			return -1, -1, kafkaError(err)
		}
		if !found || answer.Offset >= p.highWatermark {
			if lagging {
				return -1, -1, kerr.OffsetNotAvailable
			}
			return -1, -1, nil
		}
		// The log answers per batch; the exact record is inside the
		// batch, unless every record of it that reaches timestamp lies
		// below the answer (the log start inside the batch): then the
		// answer is in a later batch.
		offset, at, next, err := p.exactOffsetForTimestamp(answer, timestamp)
		if err != nil || next < 0 {
			return offset, at, err
		}
		from = next
	}
}

// exactOffsetForTimestamp narrows a batch-level answer to the first record
// whose timestamp reaches timestamp, at or after the answer's offset (the
// log start may lie inside the batch), as Kafka's LogSegment does,
// decompressing the batch if need be. If the batch has no such record, it
// returns the offset past the batch as next, where the search goes on (as
// Kafka's FileRecords.searchForTimestamp goes on to the next batch);
// otherwise next is -1. A batch of LogAppendTime, or one whose records
// cannot be read (no codec), answers with the offset found, which a
// consumer then reads from: never later than the right record.
func (p *Partition) exactOffsetForTimestamp(answer corelog.TimestampOffset, timestamp int64) (offset, at, next int64, err error) {
	h, records, ok, err := p.recordsAt(answer.Offset)
	if err != nil {
		return -1, -1, -1, err
	}
	if !ok {
		return answer.Offset, answer.Timestamp, -1, nil
	}
	for _, r := range records {
		offset := h.BaseOffset + int64(r.OffsetDelta)
		if at := h.BaseTimestamp + r.TimestampDelta; at >= timestamp && offset >= answer.Offset {
			return offset, at, -1, nil
		}
	}
	return -1, -1, h.LastOffset() + 1, nil
}

// maxTimestampOffset finds the record with the largest timestamp below the
// high watermark (ListOffsets v7, KIP-734): the log names the batch, and
// the batch, decompressed if need be, names the record.
func (p *Partition) maxTimestampOffset() (int64, int64, error) {
	base, timestamp, found, err := p.log.MaxTimestamp(p.highWatermark)
	if err != nil {
		return -1, -1, kafkaError(err)
	}
	if !found {
		return -1, -1, nil
	}
	h, records, ok, err := p.recordsAt(base)
	if err != nil {
		return -1, -1, err
	}
	if ok {
		for _, r := range records {
			offset := h.BaseOffset + int64(r.OffsetDelta)
			if at := h.BaseTimestamp + r.TimestampDelta; at == timestamp && offset >= base {
				return offset, timestamp, nil
			}
		}
	}
	return base, timestamp, nil
}

// recordsAt reads the batch holding offset, below the high watermark, and
// its records, decompressed if need be. ok is false, with no error, for a
// batch whose timestamps are the broker's (LogAppendTime: its records
// keep the producer's) or whose records cannot be read here.
func (p *Partition) recordsAt(offset int64) (batch.Header, []batch.RawRecord, bool, error) {
	b, err := p.log.Read(offset, p.highWatermark, 1, true)
	if err != nil {
		return batch.Header{}, nil, false, kafkaError(err)
	}
	h, err := batch.Parse(b)
	if err != nil || h.Attributes&batch.TimestampLogTime != 0 {
		return h, nil, false, nil
	}
	records, err := p.batchRecords(nil, b, h)
	if err != nil {
		return h, nil, false, nil
	}
	return h, records, true, nil
}

// ListedOffsetEpoch is the leader epoch a ListOffsets answer of offset
// carries, as Kafka's does: the current leader epoch for the latest
// offset, otherwise the epoch that wrote the offset (the first cached
// epoch for the earliest, the batch's for a timestamp lookup), -1 when
// unknown or when no offset was found. A consumer keeps it as its
// position's epoch, to detect a truncation below it (KIP-320).
func (p *Partition) ListedOffsetEpoch(timestamp, offset int64) int32 {
	switch {
	case timestamp == TimestampLatest:
		return p.leaderEpoch
	case offset < 0:
		return -1
	}
	if epoch, known := p.log.EpochAt(offset); known {
		return epoch
	}
	return -1
}
