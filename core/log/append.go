package log

import (
	"fmt"

	"sluice/core"
	"sluice/core/batch"
)

// AppendInfo describes what an append stored.
type AppendInfo struct {
	FirstOffset  int64 // base offset of the first batch
	LastOffset   int64 // last offset of the last batch
	MaxTimestamp int64 // largest batch max timestamp
	Bytes        int   // bytes written
}

// Append is the leader's append: batches holds one or more whole batches
// that the caller has validated. The log stamps each batch, in place in the
// caller's slice, with its base offset (densely continuing from EndOffset)
// and with leaderEpoch, writes them to the active segment (rolling first if
// they would make it bigger than SegmentBytes or it is older than
// SegmentAge), and updates the indexes and the epoch cache (a new epoch
// starts at this append's first offset). The log keeps no reference to
// batches after it returns.
//
// The batches are not durable yet: they are once SyncedOffset passes
// LastOffset (see Sync). A write error such as core.ErrDiskFull leaves no
// part of them in the log, and fences appends until the undo is durable
// (ErrTruncationNotDurable), as a TruncateTo does.
func (l *Log) Append(batches []byte, leaderEpoch int32) (AppendInfo, error) {
	if err := l.writable(); err != nil {
		return AppendInfo{}, err
	}
	if leaderEpoch < 0 {
		return AppendInfo{}, fmt.Errorf("%w: negative leader epoch %d", ErrInvalidBatch, leaderEpoch)
	}
	if latest := l.epochs.latestEpoch(); leaderEpoch < latest {
		return AppendInfo{}, fmt.Errorf("%w: %d after %d", ErrEpochWentBack, leaderEpoch, latest)
	}
	var spansOnStack [appendSpansInline]batchSpan
	spans, err := splitBatches(spansOnStack[:0], batches, batch.Validate)
	if err != nil {
		return AppendInfo{}, err
	}
	next := l.endOffset
	for i := range spans {
		b := batches[spans[i].position:]
		batch.SetBaseOffset(b, next)
		batch.SetLeaderEpoch(b, leaderEpoch)
		spans[i].header.BaseOffset = next
		spans[i].header.LeaderEpoch = leaderEpoch
		next = spans[i].header.NextOffset()
	}
	return l.appendChecked(batches, spans)
}

// AppendReplicated is the follower's append: the batches already carry
// their offsets and leader epochs from the leader. The first must start at
// or after EndOffset and each at or after the end of the previous one
// (ErrUnexpectedOffset otherwise): offsets may skip, because a leader's
// compacted log serves batches with gaps between them and with fewer
// records than offsets (batch.ValidateCompacted), as Kafka's followers
// accept. Epochs may not go back (ErrEpochWentBack). Epochs are taken from
// the headers into the epoch cache. Durability is as for Append.
func (l *Log) AppendReplicated(batches []byte) (AppendInfo, error) {
	if err := l.writable(); err != nil {
		return AppendInfo{}, err
	}
	var spansOnStack [appendSpansInline]batchSpan
	spans, err := splitBatches(spansOnStack[:0], batches, batch.ValidateCompacted)
	if err != nil {
		return AppendInfo{}, err
	}
	expected, epoch := l.endOffset, l.epochs.latestEpoch()
	for _, span := range spans {
		h := span.header
		switch {
		case h.BaseOffset < expected:
			return AppendInfo{}, fmt.Errorf("%w: batch starts at %d, below %d", ErrUnexpectedOffset, h.BaseOffset, expected)
		case h.LeaderEpoch < 0:
			return AppendInfo{}, fmt.Errorf("%w: negative leader epoch %d at offset %d", ErrInvalidBatch, h.LeaderEpoch, h.BaseOffset)
		case h.LeaderEpoch < epoch:
			return AppendInfo{}, fmt.Errorf("%w: epoch %d at offset %d after %d", ErrEpochWentBack, h.LeaderEpoch, h.BaseOffset, epoch)
		}
		expected, epoch = h.NextOffset(), h.LeaderEpoch
	}
	return l.appendChecked(batches, spans)
}

// writable reports why appends are refused, if they are.
func (l *Log) writable() error {
	if err := l.usable(); err != nil {
		return err
	}
	if l.fenced() {
		l.Sync() // make sure the sync that lifts the fence is under way
		return fmt.Errorf("%w: log end %d", ErrTruncationNotDurable, l.endOffset)
	}
	return nil
}

// batchSpan is one batch of an append: where it starts in the buffer and
// its header as it will be stored.
type batchSpan struct {
	position int
	header   batch.Header
}

// appendSpansInline is how many batches an append splits into without
// allocating: the spans start in an array on the caller's stack, and an
// append nearly always carries one batch.
const appendSpansInline = 4

// splitBatches checks that b is one or more whole batches, each passing
// validate, and returns them appended to spans.
func splitBatches(spans []batchSpan, b []byte, validate func([]byte) (batch.Header, error)) ([]batchSpan, error) {
	if len(b) == 0 {
		return nil, fmt.Errorf("%w: no batches", ErrInvalidBatch)
	}
	if len(b) > appendBytesMax {
		return nil, fmt.Errorf("%w: %d bytes, more than %d", ErrInvalidBatch, len(b), appendBytesMax)
	}
	offsets := int64(0)
	for position := 0; position < len(b); {
		h, err := batch.Parse(b[position:])
		if err != nil {
			return nil, fmt.Errorf("%w: at byte %d: %v", ErrInvalidBatch, position, err)
		}
		if h.Size() > len(b)-position {
			return nil, fmt.Errorf("%w: batch at byte %d needs %d bytes, %d left", ErrInvalidBatch, position, h.Size(), len(b)-position)
		}
		if _, err := validate(b[position : position+h.Size()]); err != nil {
			return nil, fmt.Errorf("%w: at byte %d: %v", ErrInvalidBatch, position, err)
		}
		offsets += int64(h.LastOffsetDelta) + 1
		spans = append(spans, batchSpan{position: position, header: h})
		position += h.Size()
	}
	if offsets > relativeOffsetMax {
		return nil, fmt.Errorf("%w: %d offsets in one append", ErrInvalidBatch, offsets)
	}
	return spans, nil
}

// appendChecked writes batches whose headers are final and checked.
func (l *Log) appendChecked(batches []byte, spans []batchSpan) (AppendInfo, error) {
	first, last := spans[0].header, spans[len(spans)-1].header
	// Epochs are never negative, so an empty cache's -1 differs from any.
	newEpochs, latest := 0, l.epochs.latestEpoch()
	for _, span := range spans {
		if span.header.LeaderEpoch != latest {
			newEpochs++
			latest = span.header.LeaderEpoch
		}
	}
	if len(l.epochs.entries)+newEpochs > epochEntriesMax {
		return AppendInfo{}, fmt.Errorf("%w: %d entries", ErrEpochCacheFull, len(l.epochs.entries))
	}
	// Replicated offsets may skip; a segment's indexes still cannot reach
	// beyond relativeOffsetMax from its base, which is at most the log end.
	if last.LastOffset()-l.endOffset > relativeOffsetMax {
		return AppendInfo{}, fmt.Errorf("%w: batches reach offset %d, too far beyond the end %d for one segment", ErrInvalidBatch, last.LastOffset(), l.endOffset)
	}
	maxTimestamp := int64(noTimestamp)
	for _, span := range spans {
		maxTimestamp = max(maxTimestamp, span.header.MaxTimestamp)
	}
	if !l.active().canHold(last.LastOffset(), int64(len(batches)), maxTimestamp, l.config, l.world.Clock.Elapsed()) {
		if err := l.roll(); err != nil {
			return AppendInfo{}, err
		}
	}
	s := l.active()
	position := s.bytes
	if err := writeHeaderLast(s.file, batches, position, &l.headerCopy); err != nil {
		// No partial batch may stay: cut the file back. The cut is a
		// truncation at the log end like any other, and fences appends
		// until a sync makes it durable: otherwise the segment could seal
		// and the next one fill before the cut reaches the disk, and a
		// crash that keeps the later segments' bytes but not the cut
		// leaves the partial bytes inside the log, where recovery must
		// cut it and drop every segment after. If even the cut fails,
		// the file holds bytes the log cannot account for.
		s.dirty = true
		if truncateErr := s.file.Truncate(position); truncateErr != nil {
			l.halt(fmt.Errorf("log: cannot undo a failed append (%v): %w", err, truncateErr))
		} else {
			l.truncated()
			l.Sync()
		}
		return AppendInfo{}, fmt.Errorf("log: append: %w", err)
	}
	s.dirty = true
	info := AppendInfo{FirstOffset: first.BaseOffset, LastOffset: last.LastOffset(), MaxTimestamp: noTimestamp, Bytes: len(batches)}
	for _, span := range spans {
		h := span.header
		s.record(h, position+int64(span.position), l.config.IndexIntervalBytes)
		l.epochs.assign(h.LeaderEpoch, h.BaseOffset)
		info.MaxTimestamp = max(info.MaxTimestamp, h.MaxTimestamp)
	}
	if s.endOffset != last.NextOffset() || first.BaseOffset < l.endOffset {
		panic(fmt.Sprintf("log: append of [%d, %d] after end %d left the segment ending at %d", first.BaseOffset, last.LastOffset(), l.endOffset, s.endOffset))
	}
	l.endOffset = s.endOffset
	l.known.appended(s, batches, position, spans)
	return info, nil
}

// writeHeaderLast writes batches at position so that no prefix of what
// reaches the file is a whole batch until the write is complete: the first
// batch goes out with its header zeroed, and the header follows in a
// second write. A failed append is undone by truncating the file back, but
// a crash may keep the write and lose the truncate; a short write (a full
// disk) then leaves at most headless bytes, which recovery cuts, instead of
// whole batches the caller was told were refused. header is where the
// first header waits meanwhile: the log's own (Log.headerCopy), since a
// local array would escape to the heap through the interface call.
func writeHeaderLast(f core.File, batches []byte, position int64, header *[batch.HeaderSize]byte) error {
	copy(header[:], batches)
	clear(batches[:batch.HeaderSize])
	_, err := f.WriteAt(batches, position)
	copy(batches, header[:])
	if err != nil {
		return err
	}
	_, err = f.WriteAt(header[:], position)
	return err
}
