package replica

import (
	"errors"
	"fmt"

	"github.com/twmb/franz-go/pkg/kerr"

	"sluice/core/batch"
	"sluice/core/producer"
)

// AppendResult is what a produce learns from an append.
type AppendResult struct {
	BaseOffset int64
	LastOffset int64
	// LogAppendTime is the broker's timestamp for LogAppendTime topics,
	// -1 otherwise (what Produce answers).
	LogAppendTime  int64
	LogStartOffset int64
	// Duplicate is set when the batch was a retry of one already in the
	// log: nothing was written, and the offsets are the original's.
	Duplicate bool
}

// BatchCheck is what checking a produced batch's bytes found (framing,
// CRC32C, magic, compression: batch.Validate). It depends on nothing but
// the bytes, so it can be made before the append and elsewhere: the
// broker makes it when a request is prepared, off the loop in production.
type BatchCheck struct {
	Header batch.Header
	Err    error
}

// CheckBatch checks a produced batch's bytes.
func CheckBatch(b []byte) BatchCheck {
	h, err := batch.Validate(b)
	return BatchCheck{Header: h, Err: err}
}

// AppendAsLeader validates one produced batch and appends it: the batch is
// checked once here (framing, CRC, magic, size, attributes, timestamps, the
// producer's sequence) and stored as it is, stamped with its offset and this
// leader's epoch. requireISR is set for acks=all, which Kafka refuses up
// front with NOT_ENOUGH_REPLICAS when the ISR is below min.insync.replicas.
//
// The returned error is a *kerr.Error the produce answer carries.
func (p *Partition) AppendAsLeader(b []byte, requireISR bool) (AppendResult, error) {
	return p.AppendCheckedAsLeader(b, CheckBatch(b), requireISR)
}

// AppendCheckedAsLeader is AppendAsLeader for a batch whose bytes were
// already checked: check is CheckBatch(b), made earlier (the bytes must
// not have changed since).
func (p *Partition) AppendCheckedAsLeader(b []byte, check BatchCheck, requireISR bool) (AppendResult, error) {
	return p.appendAsLeader(b, check, requireISR, true)
}

// AppendOwnAsLeader is AppendAsLeader for the broker's own records (the
// group coordinator's, in __consumer_offsets). They are not held to
// segment.bytes: a group whose metadata outgrew a small segment could
// otherwise never commit again, and the log takes an oversized batch
// alone in a fresh segment. Kafka holds them to it.
func (p *Partition) AppendOwnAsLeader(b []byte, requireISR bool) (AppendResult, error) {
	return p.appendAsLeader(b, CheckBatch(b), requireISR, false)
}

func (p *Partition) appendAsLeader(b []byte, check BatchCheck, requireISR, produced bool) (AppendResult, error) {
	if !p.IsLeader() {
		return AppendResult{}, kerr.NotLeaderForPartition
	}
	if requireISR && len(p.isr) < p.config.MinInsyncReplicas {
		return AppendResult{}, kerr.NotEnoughReplicas
	}
	if len(b) > p.config.MaxMessageBytes {
		return AppendResult{}, kerr.MessageTooLarge
	}
	h, err := check.Header, check.Err
	if err != nil {
		return AppendResult{}, validationError(err)
	}
	if h.Size() != len(b) {
		panic(fmt.Sprintf("replica: a batch check of %d bytes came with a batch of %d", h.Size(), len(b)))
	}
	if h.IsControl() {
		// Only brokers write control batches (transaction markers).
		return AppendResult{}, kerr.InvalidRecord
	}
	if h.IsTransactional() {
		// Transactions are not implemented: no partition can be in a
		// transaction, which is what Kafka says in this case.
		return AppendResult{}, kerr.InvalidTxnState
	}
	records, timestamps, err := p.checkRecords(b, h)
	if err != nil {
		return AppendResult{}, err
	}
	walked := records != nil
	now := p.w.Clock.Now().UnixMilli()
	appendTime := int64(-1)
	if p.config.LogAppendTime {
		appendTime = now
	} else {
		if !walked {
			// A compressed batch stays opaque: its header speaks for
			// its records.
			timestamps = batch.RecordTimestamps{Min: h.MaxTimestamp, Max: h.MaxTimestamp}
		}
		if err := p.checkTimestamps(timestamps, now); err != nil {
			return AppendResult{}, err
		}
		if walked && timestamps.Max != h.MaxTimestamp {
			// Kafka takes a batch's max timestamp from its records
			// (LogValidator's setMaxTimestamp); the time index and
			// retention then go by what the records say, not by what
			// the producer wrote in the header.
			batch.SetMaxTimestamp(b, timestamps.Max)
			h.MaxTimestamp = timestamps.Max
		}
	}
	if produced {
		if b, h, err = p.recompress(b, h, records); err != nil {
			return AppendResult{}, err
		}
		if int64(len(b)) > p.config.Log.SegmentBytes {
			// Kafka refuses a batch no segment could hold, after
			// validating it and before looking at its producer
			// (UnifiedLog.append's RecordBatchTooLargeException);
			// segment.bytes may be set below max.message.bytes.
			return AppendResult{}, kerr.RecordListTooLarge
		}
	}

	decision := p.producers.Check(h)
	if decision.Verdict == producer.Duplicate && (p.w.Canaries.On(CanaryDuplicateWindowIgnored) ||
		!decision.Latest && p.w.Canaries.On(CanaryDuplicateWindowOfOne)) {
		decision.Verdict = producer.Append
	}
	switch decision.Verdict {
	case producer.Duplicate:
		p.logger.Debug("duplicate batch answered with its original offsets", "producer", h.ProducerID, "producer_epoch", h.ProducerEpoch,
			"sequence", h.BaseSequence, "first", decision.Original.FirstOffset, "last", decision.Original.LastOffset)
		// Answered with the original's timestamp (on a LogAppendTime
		// topic, when it was appended), as Kafka answers a duplicate
		// (UnifiedLog: setLogAppendTime(duplicate.timestamp)), whatever
		// the topic's timestamp type.
		return AppendResult{
			BaseOffset: decision.Original.FirstOffset, LastOffset: decision.Original.LastOffset,
			LogAppendTime: decision.Original.MaxTimestamp, LogStartOffset: p.log.StartOffset(), Duplicate: true,
		}, nil
	case producer.OutOfOrder:
		p.logger.Debug("refusing batch", "reason", decision.Reason)
		return AppendResult{}, kerr.OutOfOrderSequenceNumber
	case producer.StaleEpoch:
		p.logger.Debug("refusing batch", "reason", decision.Reason)
		return AppendResult{}, kerr.InvalidProducerEpoch
	}

	if appendTime >= 0 {
		batch.SetLogAppendTime(b, appendTime)
	}
	segmentsBefore := p.log.SegmentCount()
	info, err := p.log.Append(b, p.leaderEpoch)
	if err != nil {
		p.logger.Warn("append failed", "error", err)
		return AppendResult{}, kafkaError(err)
	}
	h.BaseOffset = info.FirstOffset
	h.LeaderEpoch = p.leaderEpoch
	if appendTime >= 0 {
		h.MaxTimestamp = appendTime
	}
	p.producers.Record(h, now)
	if h.ProducerID != batch.NoProducerID {
		p.logger.Debug("appended", "first", info.FirstOffset, "last", info.LastOffset,
			"producer", h.ProducerID, "producer_epoch", h.ProducerEpoch, "sequence", h.BaseSequence)
	} else {
		p.logger.Debug("appended", "first", info.FirstOffset, "last", info.LastOffset)
	}
	if p.log.SegmentCount() != segmentsBefore {
		p.snapshots.write(p.producers, p.log.EndOffset())
	}
	p.afterAppend(int64(h.RecordCount))
	for _, f := range p.leaderAppended {
		f()
	}
	return AppendResult{
		BaseOffset: info.FirstOffset, LastOffset: info.LastOffset,
		LogAppendTime: appendTime, LogStartOffset: p.log.StartOffset(),
	}, nil
}

// checkRecords walks the records of a produced batch before it is stored
// as produced: each must parse, the batch must hold as many as its header
// says, and each record's offset delta must be its position (a consumer
// reads base offset plus delta, so a batch numbered otherwise would put
// records at offsets the next batch holds); on a compacted topic each must
// also have a key ("Compacted topic cannot accept message without key":
// compaction keeps the latest record per key, so a record without one
// could never be kept or removed correctly). The walk is framing, not a
// decode: nothing is copied. A compressed batch stays opaque, as batches
// are on the hot path (DESIGN §9), except on a compacted topic, whose
// keys must be read: there it is decompressed with World.Codecs (taken as
// produced without codecs). A batch that fails is refused with
// INVALID_RECORD, as Kafka's broker refuses it; one that does not
// decompress with CORRUPT_MESSAGE. It returns the records section it
// walked, decompressed (nil for a batch left opaque), and the range of
// their timestamps.
func (p *Partition) checkRecords(b []byte, h batch.Header) (records []byte, timestamps batch.RecordTimestamps, err error) {
	if h.Compression() != batch.CompressionNone && (!p.config.Compact || p.w.Codecs == nil) {
		return nil, timestamps, nil
	}
	records, err = p.uncompressedRecords(b, h)
	if err != nil {
		p.logger.Debug("refusing batch: its records cannot be read", "codec", h.Compression(), "error", err)
		return nil, timestamps, kerr.CorruptMessage
	}
	timestamps, err = batch.CheckRecords(records, h.RecordCount, p.config.Compact, h.BaseTimestamp)
	if err != nil {
		p.logger.Debug("refusing batch", "reason", err)
		return nil, timestamps, kerr.InvalidRecord
	}
	return records, timestamps, nil
}

// recompress rewrites a produced batch in the codec compression.type asks
// for, as Kafka's LogValidator does when the two differ: the same header
// fields and records, a new records section, length and CRC. The result
// is held to max.message.bytes again, as Kafka re-validates a batch whose
// size may have changed. records is the batch's records section if
// checkRecords already decompressed it, nil otherwise. Without codecs
// (tests of core alone) the batch stays as produced.
func (p *Partition) recompress(b []byte, h batch.Header, records []byte) ([]byte, batch.Header, error) {
	target := p.config.Compression
	if target == KeepProducerCompression || target == h.Compression() || p.w.Codecs == nil {
		return b, h, nil
	}
	section, err := records, error(nil)
	if section == nil {
		if section, err = p.uncompressedRecords(b, h); err != nil {
			p.logger.Debug("refusing batch: its records cannot be read", "codec", h.Compression(), "error", err)
			return nil, h, kerr.CorruptMessage
		}
	}
	if target != batch.CompressionNone {
		if section, err = p.w.Codecs.Compress(target, nil, section); err != nil {
			p.logger.Warn("cannot compress a batch for compression.type", "codec", batch.CodecName(target), "error", err)
			return nil, h, kerr.UnknownServerError
		}
	}
	h.Attributes = h.Attributes&^batch.CompressionMask | int16(target)
	rewritten := batch.Rebuild(h, section, h.RecordCount)
	if len(rewritten) > p.config.MaxMessageBytes {
		return nil, h, kerr.MessageTooLarge
	}
	h, err = batch.Parse(rewritten)
	if err != nil {
		panic(fmt.Sprintf("replica: a rebuilt batch does not parse: %v", err))
	}
	return rewritten, h, nil
}

// checkTimestamps applies message.timestamp.before.max.ms and
// message.timestamp.after.max.ms (KIP-937) to a CreateTime batch's record
// timestamps, as Kafka's LogValidator does record by record: the oldest
// against the first, the newest against the second. Records without a
// timestamp are not judged.
func (p *Partition) checkTimestamps(timestamps batch.RecordTimestamps, nowMs int64) error {
	if before := p.config.TimestampBeforeMax.Milliseconds(); timestamps.Min != batch.NoTimestamp && nowMs-timestamps.Min > before && before >= 0 {
		return kerr.InvalidTimestamp
	}
	if after := p.config.TimestampAfterMax.Milliseconds(); timestamps.Max != batch.NoTimestamp && timestamps.Max-nowMs > after && after >= 0 {
		return kerr.InvalidTimestamp
	}
	return nil
}

// afterAppend starts the sync the append needs: at once under the durable
// default, where acknowledgements wait for it (one sync covers every append
// made meanwhile: group commit); after flush.messages records or flush.ms in
// page-cache mode. Then the high watermark may move (page-cache mode).
func (p *Partition) afterAppend(records int64) {
	switch {
	case p.config.Durable:
		p.log.Sync()
	default:
		p.unflushedMessages += records
		if p.unflushedMessages >= p.config.FlushMessages {
			p.flush()
		} else if p.flushTimer == nil && p.config.FlushInterval > 0 && p.config.FlushInterval < maxFlushInterval {
			p.flushTimer = p.w.Clock.AfterFunc(p.config.FlushInterval, p.flush)
		}
	}
	p.updateHighWatermark()
}

// maxFlushInterval is where flush.ms stops meaning anything: Kafka's
// default, Long.MAX_VALUE milliseconds, means never.
const maxFlushInterval = 1 << 62

func (p *Partition) flush() {
	if p.flushTimer != nil {
		p.flushTimer.Stop()
		p.flushTimer = nil
	}
	p.unflushedMessages = 0
	p.log.Sync()
}

// validationError maps what is wrong with a batch to the Kafka error Kafka
// gives for it.
func validationError(err error) error {
	switch {
	case errors.Is(err, batch.ErrCRC):
		return kerr.CorruptMessage
	case errors.Is(err, batch.ErrShort), errors.Is(err, batch.ErrLength):
		return kerr.CorruptMessage
	case errors.Is(err, batch.ErrCompression):
		return kerr.UnsupportedCompressionType
	default: // wrong magic, record count
		return kerr.InvalidRecord
	}
}
