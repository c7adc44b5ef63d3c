package log

import (
	"fmt"
	"slices"

	"sluice/core/batch"
)

// cleanGroup rewrites one group of segments into a new segment holding
// what compaction keeps of them, and switches the log to it in memory; the
// sync rounds swap it in on disk (compaction_swap.go). A group in which
// nothing would change is left alone. On an error the new file is removed
// and the log is unchanged.
func (l *Log) cleanGroup(pass *cleanerPass, group []*segment, result *CompactionResult, budget *int64) error {
	base := group[0].baseOffset
	groupEnd := group[len(group)-1].endOffset
	name := cleanedPath(l.dir, base)
	f, err := l.world.FS.OpenFile(name, true)
	if err != nil {
		return fmt.Errorf("log: compaction cannot create %s: %w", name, err)
	}
	l.directoryDirty = true
	discard := func() {
		f.Close()
		l.removeFile(name)
	}
	// A file left under this name by a crash or an abandoned pass holds
	// nothing of value.
	if err := f.Truncate(0); err != nil {
		discard()
		return err
	}
	w := cleanedWriter{segment: newSegment(base, f, &l.reads), indexIntervalBytes: l.config.IndexIntervalBytes,
		lastOffsetInTimeIndex: l.world.Canaries.On(CanaryCompactionTimeIndexLastOffset)}
	w.segment.mayHaveGaps = true
	var tally CompactionResult
	changed := false
	for _, source := range group {
		err := source.walkBatches(source.baseOffset, func(h batch.Header, b []byte, position int64) (bool, error) {
			if err := l.checkEpoch(source, h, position); err != nil {
				return false, err
			}
			*budget -= int64(len(b))
			tally.BytesRead += int64(len(b))
			kept, batchChanged := l.cleanBatch(pass, source, h, b, h.NextOffset() == groupEnd, &tally)
			changed = changed || batchChanged
			if kept == nil {
				return true, nil
			}
			return true, w.add(kept)
		})
		if err != nil {
			discard()
			return l.readFailure(source, err)
		}
	}
	if err := w.flush(); err != nil {
		discard()
		return err
	}
	result.BytesRead += tally.BytesRead
	result.BatchesLeftIntact += tally.BatchesLeftIntact
	if !changed {
		discard()
		return nil
	}
	cleaned := w.segment
	if cleaned.endOffset != groupEnd {
		panic(fmt.Sprintf("log: compacted segment %d ends at %d, its group at %d: the group's last batch must stay", base, cleaned.endOffset, groupEnd))
	}
	cleaned.seal()
	cleaned.dirty = true

	// The switch: from now on readers see the new segment.
	i := slices.Index(l.segments, group[0])
	if i < 0 || i+len(group) > len(l.segments)-1 || l.segments[i+len(group)-1] != group[len(group)-1] {
		panic(fmt.Sprintf("log: compacted group at %d is no longer in the log", base))
	}
	l.segments = slices.Replace(l.segments, i, i+len(group), cleaned)
	for _, old := range group {
		old.file.Close()
	}
	l.registerSwap(cleaned, group)

	result.SegmentsRewritten += len(group)
	result.BytesWritten += cleaned.bytes
	result.RecordsRemoved += tally.RecordsRemoved
	result.TombstonesRemoved += tally.TombstonesRemoved
	result.BatchesRemoved += tally.BatchesRemoved
	l.logger().Debug("compacted segments", "base", base, "end", groupEnd, "segments", len(group),
		"bytes before", tally.BytesRead, "bytes after", cleaned.bytes, "records removed", tally.RecordsRemoved+tally.TombstonesRemoved)
	return nil
}

// cleanBatch decides what of one batch compaction keeps (see compaction.go
// for the rules) and returns the bytes to write, nil if the batch goes
// whole, and whether that differs from the batch as it was. lastOfGroup is
// set for the group's last batch, which always stays. The returned bytes
// may be b itself, or the log's scratch space: the caller writes them
// (cleanedWriter.add copies them) before the walk reads on.
func (l *Log) cleanBatch(pass *cleanerPass, source *segment, h batch.Header, b []byte, lastOfGroup bool, tally *CompactionResult) ([]byte, bool) {
	records, ok := l.lookInto(h, b)
	if !ok {
		pass.intactSeen = true
		tally.BatchesLeftIntact++
		return b, false
	}
	// A tombstone may go only if an earlier pass had it in its map (it is
	// below that pass's end, the cleaner offset this pass started from),
	// its segment is older than the delete horizon, and no batch before it
	// could hide an older record of its key.
	tombstonesMayGo := source.maxTimestamp < pass.deleteHorizon && !pass.intactSeen
	kept := l.compactionScratch.kept[:0]
	removed, tombstones := int64(0), int64(0)
	for _, r := range records {
		offset := h.BaseOffset + int64(r.OffsetDelta)
		switch {
		case r.Key == nil || pass.offsets.supersedes(r.Key, offset):
			removed++
		case r.Value == nil && offset < pass.dirtyStart && tombstonesMayGo:
			tombstones++
		default:
			kept = append(kept, r)
		}
	}
	l.compactionScratch.kept = kept
	tally.RecordsRemoved += removed
	tally.TombstonesRemoved += tombstones
	switch {
	case removed+tombstones == 0:
		return b, false
	case len(kept) > 0:
		if rewritten, ok := l.rebuildBatch(h, kept); ok {
			return rewritten, true
		}
		pass.intactSeen = true
		tally.BatchesLeftIntact++
		tally.RecordsRemoved -= removed
		tally.TombstonesRemoved -= tombstones
		return b, false
	case lastOfGroup || pass.isProducersLast(h) || l.epochs.startsAt(h.LeaderEpoch, h.BaseOffset):
		return batch.Empty(h), true
	}
	tally.BatchesRemoved++
	return nil, true
}

// rebuildBatch encodes h's batch with only the kept records, compressed
// again with the batch's codec. The records keep their offset and
// timestamp deltas, so base offset, base timestamp and last offset delta
// stay; the max timestamp is recomputed from the kept records unless the
// batch carries the broker's append time, as Kafka's MemoryRecordsBuilder
// does. It reports false if the records cannot be compressed again.
func (l *Log) rebuildBatch(h batch.Header, kept []batch.RawRecord) ([]byte, bool) {
	// Assembled in the log's scratch space: Rebuild copies it.
	section := l.compactionScratch.section[:0]
	for _, r := range kept {
		section = append(section, r.Encoded...)
	}
	l.compactionScratch.section = section
	if codec := h.Compression(); codec != batch.CompressionNone {
		compressed, err := l.world.Codecs.Compress(codec, nil, section)
		if err != nil {
			l.logger().Warn("compaction cannot compress a batch again; leaving it as it is", "offset", h.BaseOffset, "codec", codec, "error", err)
			return nil, false
		}
		section = compressed
	}
	if h.Attributes&batch.TimestampLogTime == 0 {
		h.MaxTimestamp = h.BaseTimestamp + kept[0].TimestampDelta
		for _, r := range kept[1:] {
			h.MaxTimestamp = max(h.MaxTimestamp, h.BaseTimestamp+r.TimestampDelta)
		}
	}
	return batch.Rebuild(h, section, int32(len(kept))), true
}

// cleanedWriter writes the batches compaction keeps into the new segment's
// file, buffered, and keeps the new segment's indexes as appends would.
// Its batches are a subsequence of the group's, so its indexes need no more
// entries than the group's segments had between them (an entry is added
// once more than an index interval of bytes has passed, and removing
// batches can only make that rarer).
type cleanedWriter struct {
	segment            *segment
	indexIntervalBytes int
	pending            []byte
	written            int64
	// lastOffsetInTimeIndex plants CanaryCompactionTimeIndexLastOffset.
	lastOffsetInTimeIndex bool
}

func (w *cleanedWriter) add(b []byte) error {
	h, err := batch.Parse(b)
	if err != nil || h.Size() != len(b) {
		panic(fmt.Sprintf("log: compaction produced a malformed batch: %v", err))
	}
	s := w.segment
	if s.offsets.full() || s.times.full() {
		return fmt.Errorf("log: compacted segment %d would need more index entries than %d", s.baseOffset, indexEntriesMax)
	}
	entries := len(s.times.entries)
	s.record(h, s.bytes, w.indexIntervalBytes)
	if w.lastOffsetInTimeIndex && h.LastOffsetDelta > 0 {
		// The planted bug: the batch of the largest timestamp is named
		// by its last offset, in the time index and what it tracks.
		if s.offsetOfMaxTimestamp == h.BaseOffset {
			s.offsetOfMaxTimestamp = h.LastOffset()
		}
		if n := len(s.times.entries); n > entries && s.times.entries[n-1].offset == h.BaseOffset {
			s.times.entries[n-1].offset = h.LastOffset()
		}
	}
	w.pending = append(w.pending, b...)
	if len(w.pending) >= cleanedWriteChunkBytes {
		return w.flush()
	}
	return nil
}

func (w *cleanedWriter) flush() error {
	if len(w.pending) == 0 {
		return nil
	}
	if _, err := w.segment.file.WriteAt(w.pending, w.written); err != nil {
		return fmt.Errorf("log: writing compacted segment %d: %w", w.segment.baseOffset, err)
	}
	w.written += int64(len(w.pending))
	w.pending = w.pending[:0]
	return nil
}
