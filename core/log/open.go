package log

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"path"
	"slices"
	"strings"

	"sluice/core"
	"sluice/core/batch"
)

// Open opens the partition log in dir (a slash path on w.FS), creating the
// directory if it is missing, and recovers it from whatever a crash left:
//
//  1. Stray temporary files are removed, and so are index files whose
//     segment is gone. A compaction swap that was committed (a .log.swap
//     file) is finished, and one that was not (a .log.cleaned file) is
//     discarded (see compaction_swap.go).
//  2. The checkpoint gives the log start offset, the recovery point and the
//     leader epochs of the trusted segments. Without a readable checkpoint
//     nothing is trusted and everything is scanned.
//  3. Segments wholly below the start offset are deleted (their removal was
//     not durable yet). If the segment holding the start offset is missing,
//     a failed sync lost it and everything after it is unsynced: the log
//     restarts empty at its start offset.
//  4. Each segment ending strictly below the recovery point is trusted (see
//     checkpoint_trust.go for why that is sound): its index files are loaded
//     and sanity-checked, and only the batches after its last offset index
//     entry are read and checked, which also proves the segment still ends
//     where the next one begins. A segment that fails any of this is scanned
//     instead, and so is every segment after it.
//  5. Scanned segments are read batch by batch, checking framing, CRC,
//     offset continuity and epochs, rebuilding their indexes and the epoch
//     cache from the batch headers (the headers are the truth; the
//     checkpoint is a cache). At the first batch that fails on every
//     re-read the segment is cut there and every later segment deleted;
//     a segment that does not start where the previous one ended (a gap,
//     as when a segment's name was never made durable) is deleted with
//     every later one. A segment that starts below the previous one's end
//     is a leftover of a finished compaction swap, which the previous
//     segment replaced: it alone is deleted.
//
// After Open, SyncedOffset is the part recovery knows to be durable (up to
// the recovery point); the rest becomes durable with the next sync. If
// recovery cut the log, appends wait for a sync that Open starts, as after
// TruncateTo.
func Open(w core.World, dir string, config Config) (*Log, error) {
	if err := config.Validate(); err != nil {
		return nil, err
	}
	if w.FS == nil || w.Clock == nil || w.Halt == nil {
		return nil, errors.New("log: the World must provide FS, Clock and Halt")
	}
	if !fs.ValidPath(dir) || dir == "." {
		return nil, fmt.Errorf("log: %q is not a directory name for a partition", dir)
	}
	logger := w.Log
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	l := &Log{world: w, nodeLogger: logger, dir: dir, config: config, compactionBytesPerCall: compactionReadBytesPerCallMax, restartedStart: -1}

	// The directory's own name must become durable too, in every parent
	// MkdirAll may have created.
	syncParents := func() {
		for parent := path.Dir(dir); ; parent = path.Dir(parent) {
			l.directoriesToSync = append(l.directoriesToSync, parent)
			if parent == "." {
				break
			}
		}
	}
	names, err := w.FS.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		if err := w.FS.MkdirAll(dir); err != nil {
			return nil, err
		}
		syncParents()
		names, err = nil, nil
	}
	if err != nil {
		return nil, err
	}
	if err := l.recover(names); err != nil {
		for _, s := range l.segments {
			s.file.Close()
		}
		return nil, err
	}
	if l.checkpointDurable == nil && len(l.directoriesToSync) == 0 {
		// No checkpoint was ever durable, so neither, perhaps, is the
		// directory an earlier process created: a process that died
		// without a power loss leaves its page cache to the next one.
		syncParents()
	}
	l.checkInvariants()
	if l.fenced() {
		l.Sync()
	}
	return l, nil
}

// recover rebuilds the log's state from the directory's file names.
func (l *Log) recover(names []string) error {
	checkpointFound, bases, err := l.tidyDirectory(names)
	if err != nil {
		return err
	}
	var saved *checkpoint
	if checkpointFound {
		c, err := readChecked(l.world.FS, path.Join(l.dir, checkpointName), checkpointBytesMax, decodeCheckpoint)
		switch {
		case err == nil:
			saved = &c
		case errors.Is(err, errBadData):
			l.logger().Warn("checkpoint unreadable; scanning every segment", "error", err)
		default:
			return err
		}
	}
	l.checkpointDurable = saved
	start, recoveryPoint := int64(0), int64(0)
	if saved != nil {
		start, recoveryPoint = saved.startOffset, saved.recoveryPoint
	}

	// Which segments compaction rewrote is not recorded: in a log that is
	// compacted, or was (a cleaner offset), any may hold gaps.
	gapsPossible := l.config.Compacted || (saved != nil && saved.cleanerOffset > 0)
	for _, base := range bases {
		f, err := l.world.FS.OpenFile(segmentPath(l.dir, base), false)
		if err != nil {
			return err
		}
		s := newSegment(base, f, &l.reads)
		s.mayHaveGaps = gapsPossible
		l.segments = append(l.segments, s)
	}
	for len(l.segments) > 1 && l.segments[1].baseOffset <= start {
		l.deleteSegments(l.segments[:1])
		l.segments = l.segments[1:]
	}
	// The start is known if the checkpoint was read, or if there is none:
	// no checkpoint was ever durable, so no segment was ever removed, and
	// the log still starts at 0.
	startKnown := saved != nil || !checkpointFound
	if startKnown && len(l.segments) > 0 && l.segments[0].baseOffset > start {
		// The segment holding the durable start offset is gone. Segments
		// are removed from the front only once a checkpoint past them is
		// durable, so only a failed sync can have lost it, and a segment
		// whose name no sync made durable holds nothing synced, nor does
		// anything after it. Keep none of it: the log restarts at its start.
		l.logger().Warn("the segment holding the start offset is missing; restarting the log empty",
			"start", start, "first segment", l.segments[0].baseOffset)
		l.deleteSegments(l.segments)
		l.segments = nil
		l.truncated()
	}
	if len(l.segments) == 0 {
		s, err := l.createSegment(start)
		if err != nil {
			return err
		}
		l.segments = []*segment{s}
	}
	start = max(start, l.segments[0].baseOffset)

	scanned, err := l.loadSegments(saved, start, recoveryPoint)
	if err != nil {
		return err
	}

	l.endOffset = l.active().endOffset
	if l.endOffset < start {
		// Everything from the start offset on was lost: it was never
		// durable. The log starts again, empty, at its start offset.
		l.logger().Warn("recovered log ends below its start offset; restarting it empty", "end", l.endOffset, "start", start)
		l.deleteSegments(l.segments)
		l.truncated()
		s, err := l.createSegment(start)
		if err != nil {
			l.segments = nil
			return err
		}
		l.segments = []*segment{s}
		l.endOffset = start
		l.epochs = epochCache{}
		scanned = nil
	}
	l.startOffset = start
	l.epochs.truncateFromEnd(l.endOffset)
	l.epochs.truncateFromStart(start)
	if saved != nil {
		// A cleaner offset above the recovered end is lowered, and
		// appends wait until that is durable (see fenced).
		l.cleanerOffset = min(saved.cleanerOffset, l.endOffset)
		l.cleanerOffsetSafe = l.cleanerOffset
	}

	// Scanned segments may hold bytes that were only in the page cache,
	// and their index files on disk may be stale: rewrite those, and sync
	// all of it with the next round before any recovery point covers it.
	// Their names, too, may never have been made durable: a process that
	// died without a power loss leaves its page cache to the next one.
	// A segment ending below the durable recovery point is covered
	// already: the next recovery may trust its index files, so a rewrite
	// that a crash tears before the next round is trusted too (log seed
	// 711061, which read a time index of zeros and failed an assertion
	// later). Its files are rewritten only if they differ from what the
	// scan rebuilt (damaged or missing); the same bytes are left alone.
	active := l.active()
	if len(scanned) > 0 {
		l.directoryDirty = true
	}
	for _, s := range scanned {
		s.dirty = true
		if s != active {
			s.seal()
			if s.endOffset >= recoveryPoint || !l.indexFilesHold(s) {
				l.writeIndexFiles(s)
			}
		}
	}
	active.sealed = false
	active.activeSince = l.world.Clock.Elapsed()
	active.rollJitter = l.drawRollJitter()
	l.syncedOffset = min(recoveryPoint, l.endOffset)
	return nil
}

// tidyDirectory sorts the directory's names into segments and leftovers,
// removing temporary files and index files whose segment is gone, and
// finishing or discarding interrupted compaction swaps.
func (l *Log) tidyDirectory(names []string) (checkpointFound bool, bases []int64, err error) {
	segmentNames := map[int64]bool{}
	var indexNames []string
	var swapBases []int64
	for _, name := range names {
		if base, ok := parseBaseName(name, segmentSuffix); ok {
			bases = append(bases, base)
			segmentNames[base] = true
			continue
		}
		if base, ok := parseBaseName(name, swapSuffix); ok {
			swapBases = append(swapBases, base)
			continue
		}
		switch {
		case name == checkpointName:
			checkpointFound = true
		case strings.HasSuffix(name, temporarySuffix) || strings.HasSuffix(name, cleanedSuffix):
			l.removeFile(path.Join(l.dir, name))
		case strings.HasSuffix(name, offsetIndexSuffix) || strings.HasSuffix(name, timeIndexSuffix):
			indexNames = append(indexNames, name)
		}
	}
	for _, base := range swapBases {
		// Committed: the new segment replaces <base>.log. The index files
		// under that name may describe the old file, so they go; the
		// other old segments it covers go when loadSegments finds them
		// inside its range.
		l.removeFile(offsetIndexPath(l.dir, base))
		l.removeFile(timeIndexPath(l.dir, base))
		if err := l.world.FS.Rename(swapPath(l.dir, base), segmentPath(l.dir, base)); err != nil {
			return false, nil, fmt.Errorf("log: finishing an interrupted compaction of segment %d: %w", base, err)
		}
		l.directoryDirty = true
		l.logger().Info("finished an interrupted compaction swap", "segment", base)
		if !segmentNames[base] {
			segmentNames[base] = true
			bases = append(bases, base)
			slices.Sort(bases)
		}
	}
	for _, name := range indexNames {
		base, ok := parseBaseName(name, offsetIndexSuffix)
		if !ok {
			base, ok = parseBaseName(name, timeIndexSuffix)
		}
		if ok && (!segmentNames[base] || slices.Contains(swapBases, base)) {
			l.removeFile(path.Join(l.dir, name))
		}
	}
	if len(bases) > segmentsMax {
		return false, nil, fmt.Errorf("log: %s holds %d segments, more than %d", l.dir, len(bases), segmentsMax)
	}
	for i := 1; i < len(bases); i++ {
		if bases[i] <= bases[i-1] {
			panic(fmt.Sprintf("log: ReadDir returned segment names out of order: %d after %d", bases[i], bases[i-1]))
		}
	}
	return checkpointFound, bases, nil
}

// loadSegments loads or scans every segment in order (steps 4 and 5 of
// Open), cutting the log at the first bad batch or gap. It returns the
// segments it scanned.
func (l *Log) loadSegments(saved *checkpoint, start, recoveryPoint int64) (scanned []*segment, err error) {
	trusting := saved != nil
	for i := 0; i < len(l.segments); i++ {
		s := l.segments[i]
		if i > 0 && s.baseOffset < l.segments[i-1].endOffset {
			l.logger().Info("deleting a segment a finished compaction swap replaced",
				"segment", s.baseOffset, "covered by", l.segments[i-1].baseOffset, "until", l.segments[i-1].endOffset)
			l.deleteSegments(l.segments[i : i+1])
			l.segments = slices.Delete(l.segments, i, i+1)
			i--
			continue
		}
		if i > 0 && s.baseOffset != l.segments[i-1].endOffset {
			l.logger().Warn("recovery found a gap; deleting the segments after it",
				"segment", s.baseOffset, "previous end", l.segments[i-1].endOffset)
			l.deleteSegments(l.segments[i:])
			l.segments = l.segments[:i]
			l.truncated()
			break
		}
		if trusting && i+1 < len(l.segments) && l.segments[i+1].baseOffset < recoveryPoint {
			err := l.loadTrusted(s, l.segments[i+1].baseOffset)
			if err == nil {
				continue
			}
			if !errors.Is(err, errBadData) && !errors.Is(err, fs.ErrNotExist) {
				return nil, err
			}
			l.logger().Info("segment below the recovery point failed its checks; scanning from it", "segment", s.baseOffset, "error", err)
		}
		if len(scanned) == 0 && saved != nil {
			// Epochs of the trusted segments come from the checkpoint;
			// from here on the batch headers say.
			for _, e := range saved.epochs {
				if e.StartOffset < s.baseOffset {
					l.epochs.entries = append(l.epochs.entries, e)
				}
			}
		}
		trusting = false
		scanned = append(scanned, s)
		complete, err := l.scanSegment(s, start, saved)
		if err != nil {
			return nil, err
		}
		if !complete {
			l.truncated()
			l.deleteSegments(l.segments[i+1:])
			l.segments = l.segments[:i+1]
			break
		}
	}
	return scanned, nil
}

// loadTrusted loads a segment ending below the recovery point from its index
// files, reading only the batches after the last offset index entry. It
// fails, leaving the segment reset for a scan, if the indexes fail their
// sanity checks, a batch fails its checks, or the segment does not end at
// nextBase.
func (l *Log) loadTrusted(s *segment, nextBase int64) error {
	err := l.loadIndexes(s)
	if err == nil {
		verifyCRC := !l.world.Canaries.On(CanaryRecoverySkipsCRC)
		err = s.readForwardRereading(s.sizeOnDisk, l.config.IndexIntervalBytes, verifyCRC, nil)
	}
	if err == nil && s.endOffset != nextBase {
		err = fmt.Errorf("%w: segment %d ends at %d but the next one starts at %d", errBadData, s.baseOffset, s.endOffset, nextBase)
	}
	if err == nil && len(s.times.entries) > 0 && s.times.last().offset >= s.endOffset {
		err = fmt.Errorf("%w: segment %d time index points past its end", errBadData, s.baseOffset)
	}
	if err != nil {
		s.offsets.entries, s.times.entries = nil, nil
		s.restartAt(offsetEntry{offset: s.baseOffset})
		return err
	}
	s.sealed = true
	return nil
}

// indexFilesHold reports whether s's index files on disk hold exactly
// the indexes a scan rebuilt for it.
func (l *Log) indexFilesHold(s *segment) bool {
	for _, file := range []struct {
		path    string
		max     int64
		kind    indexKind
		rebuilt []byte
	}{
		{offsetIndexPath(l.dir, s.baseOffset), offsetIndexBytesMax, offsetIndexKind, s.offsets.appendTo(nil)},
		{timeIndexPath(l.dir, s.baseOffset), timeIndexBytesMax, timeIndexKind, s.times.appendTo(nil)},
	} {
		onDisk, err := readChecked(l.world.FS, file.path, file.max, func(b []byte) ([]byte, error) {
			_, err := file.kind.entries(b)
			return b, err
		})
		if err != nil || !bytes.Equal(onDisk, file.rebuilt) {
			return false
		}
	}
	return true
}

func (l *Log) loadIndexes(s *segment) error {
	size, err := s.file.Size()
	if err != nil {
		return err
	}
	s.sizeOnDisk = size
	offsets, err := readChecked(l.world.FS, offsetIndexPath(l.dir, s.baseOffset), offsetIndexBytesMax, func(b []byte) (offsetIndex, error) {
		return decodeOffsetIndex(s.baseOffset, b, size)
	})
	if err != nil {
		return err
	}
	times, err := readChecked(l.world.FS, timeIndexPath(l.dir, s.baseOffset), timeIndexBytesMax, func(b []byte) (timeIndex, error) {
		return decodeTimeIndex(s.baseOffset, b)
	})
	if err != nil {
		return err
	}
	s.offsets, s.times = offsets, times
	s.restartAt(s.offsets.last())
	return nil
}

// scanSegment rebuilds a segment's state by reading every batch from its
// start. It reports false if it had to cut the segment short at a batch
// that failed its checks on every re-read.
func (l *Log) scanSegment(s *segment, start int64, saved *checkpoint) (complete bool, err error) {
	size, err := s.file.Size()
	if err != nil {
		return false, err
	}
	s.sizeOnDisk = size
	s.offsets.entries, s.times.entries = nil, nil
	s.restartAt(offsetEntry{offset: s.baseOffset})
	verifyCRC := !l.world.Canaries.On(CanaryRecoverySkipsCRC)
	err = s.readForwardRereading(size, l.config.IndexIntervalBytes, verifyCRC, l.recoverEpoch(s, start, saved))
	if err == nil {
		return true, nil
	}
	if !errors.Is(err, errBadData) {
		return false, err
	}
	l.logger().Warn("recovery cut a segment at a bad batch", "segment", s.baseOffset,
		"position", s.bytes, "offset", s.endOffset, "reason", err)
	if err := s.file.Truncate(s.bytes); err != nil {
		return false, err
	}
	return false, nil
}

// recoverEpoch returns the check a scanned batch's leader epoch must pass
// before the epoch cache takes it. The epoch field is outside the CRC, so
// every batch's epoch is believed only once three reads in a row agree on
// it (confirmedEpoch): not only a new epoch's, since a flip in flight can as
// well make the first batch of an epoch read as one of the epoch before,
// and the cache would then lose that epoch for good (log seed 2103031).
// Batches wholly below the start offset are deleted as far as readers go
// and say nothing about epochs: a truncation may have emptied the epoch
// cache since they were written.
//
// Compaction may have removed an epoch's first batches, so an epoch first
// seen after a gap may have started inside the gap: if the checkpoint knows
// the epoch to start there, that start is taken.
func (l *Log) recoverEpoch(s *segment, start int64, saved *checkpoint) func(h batch.Header, position int64) error {
	header := make([]byte, batch.HeaderSize)
	return func(h batch.Header, position int64) error {
		if h.LastOffset() < start {
			return nil
		}
		epoch, err := confirmedEpoch(s.file, header, h, position)
		if err != nil {
			return err
		}
		if !l.epochs.startsNewEpoch(epoch) {
			return nil
		}
		if epoch < 0 || epoch < l.epochs.latestEpoch() {
			return fmt.Errorf("%w: batch at offset %d has epoch %d after epoch %d", errBadData, h.BaseOffset, epoch, l.epochs.latestEpoch())
		}
		if len(l.epochs.entries) >= epochEntriesMax {
			return fmt.Errorf("%w: batch at offset %d starts more epochs than the cache holds", errBadData, h.BaseOffset)
		}
		epochStart := h.BaseOffset
		if saved != nil && h.BaseOffset > s.endOffset {
			for _, e := range saved.epochs {
				if e.Epoch == epoch && e.StartOffset >= max(s.endOffset, start) && e.StartOffset < h.BaseOffset {
					epochStart = e.StartOffset
				}
			}
		}
		l.epochs.assign(epoch, epochStart)
		return nil
	}
}

// confirmedEpoch reads the header of the batch h was read from (at
// position) again, into header, until 1+confirmReadsAgreeing reads in a
// row agree on its leader epoch, the read h came from counting as the
// first, and returns that epoch. Two in a row would not do: a flip in
// flight of one bit of the epoch, made the same way in two re-reads after
// a clean first read, had epoch 2^16 believed for a batch of epoch 0, and
// recovery cut synced batches after it as going back to epoch 0 (log seed
// 1089032). A re-read that fails to parse or names another base offset
// (also outside the CRC) was flipped in flight and breaks the run. After
// readAttemptsMax re-reads without agreement the batch is bad data.
func confirmedEpoch(f core.File, header []byte, h batch.Header, position int64) (int32, error) {
	epoch, alike := h.LeaderEpoch, 1
	for range readAttemptsMax {
		if err := readFull(f, header, position); err != nil {
			return 0, err
		}
		again, err := batch.Parse(header)
		switch {
		case err != nil || again.BaseOffset != h.BaseOffset:
			alike = 0
		case alike > 0 && again.LeaderEpoch == epoch:
			alike++
		default:
			epoch, alike = again.LeaderEpoch, 1
		}
		if alike > confirmReadsAgreeing {
			return epoch, nil
		}
	}
	return 0, fmt.Errorf("%w: batch at offset %d: no %d reads in a row agree on its leader epoch", errBadData, h.BaseOffset, 1+confirmReadsAgreeing)
}
