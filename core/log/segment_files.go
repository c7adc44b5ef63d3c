package log

import (
	"errors"
	"fmt"
	"io/fs"
	"time"

	"sluice/core"
)

// Creating, sealing and deleting segment files. Every name created or
// removed marks the directory dirty, so the next sync round makes the
// change durable with SyncDir.

// createSegment creates an empty segment file at baseOffset.
func (l *Log) createSegment(baseOffset int64) (*segment, error) {
	f, err := l.world.FS.OpenFile(segmentPath(l.dir, baseOffset), true)
	if err != nil {
		return nil, err
	}
	// A file can be left under this name only by a removal that failed;
	// its bytes belong to no segment, and the cut must reach the disk.
	leftover := false
	if size, err := f.Size(); err != nil || size != 0 {
		if err := f.Truncate(0); err != nil {
			f.Close()
			return nil, err
		}
		leftover = true
	}
	l.directoryDirty = true
	s := newSegment(baseOffset, f, &l.reads)
	s.activeSince = l.world.Clock.Elapsed()
	s.rollJitter = l.drawRollJitter()
	s.dirty = leftover
	return s, nil
}

// drawRollJitter draws a segment's roll jitter, as Kafka's
// LogConfig.randomSegmentJitter does: below the smaller of segment.jitter.ms
// and segment.ms; nothing is drawn without jitter.
func (l *Log) drawRollJitter() time.Duration {
	bound := min(l.config.SegmentJitter, l.config.SegmentAge)
	if bound <= 0 {
		return 0
	}
	return core.RandomDuration(l.world.Entropy, 0, bound-1)
}

// roll seals the active segment and starts a new one at the end offset.
func (l *Log) roll() error {
	old := l.active()
	if old.bytes == 0 {
		panic(fmt.Sprintf("log: rolling empty segment %d would reuse its name", old.baseOffset))
	}
	s, err := l.createSegment(l.endOffset)
	if err != nil {
		return fmt.Errorf("log: roll: %w", err)
	}
	old.seal()
	l.writeIndexFiles(old)
	l.segments = append(l.segments, s)
	l.logger().Debug("rolled segment", "sealed", old.baseOffset, "active", s.baseOffset)
	return nil
}

// writeIndexFiles writes a sealed segment's index files into the page
// cache; the next sync round syncs and closes them. Index files are a
// cache: if writing one fails it is left empty, and recovery then reads the
// whole segment instead.
func (l *Log) writeIndexFiles(s *segment) {
	// Each encoded into the log's scratch buffer just before it is
	// written: WriteAt keeps nothing it is given.
	l.writeScratch = s.offsets.appendTo(l.scratchForWrite())
	l.writeIndexFile(offsetIndexPath(l.dir, s.baseOffset), l.writeScratch)
	l.writeScratch = s.times.appendTo(l.scratchForWrite())
	l.writeIndexFile(timeIndexPath(l.dir, s.baseOffset), l.writeScratch)
	l.directoryDirty = true
}

// writeIndexFile writes one index file for writeIndexFiles.
func (l *Log) writeIndexFile(name string, data []byte) {
	f, err := l.world.FS.OpenFile(name, true)
	if err != nil {
		l.logger().Warn("index file not written", "file", name, "error", err)
		return
	}
	if err = f.Truncate(0); err == nil {
		_, err = f.WriteAt(data, 0)
	}
	if err != nil {
		l.logger().Info("index file left empty", "file", name, "error", err)
		f.Truncate(0)
	}
	l.filesToSync = append(l.filesToSync, f)
}

// deleteSegments closes and removes the files of the given segments. The
// caller drops them from l.segments. A compaction output whose swap has not
// finished takes the segments it replaces with it (see compaction_swap.go).
func (l *Log) deleteSegments(segments []*segment) {
	for _, s := range segments {
		s.file.Close()
		if s.swap != nil {
			l.cancelSwap(s.swap)
			continue
		}
		l.removeSegmentFiles(s.baseOffset)
	}
}

// removeSegmentFiles removes a segment's file and its index files.
func (l *Log) removeSegmentFiles(baseOffset int64) {
	l.removeFile(segmentPath(l.dir, baseOffset))
	l.removeFile(offsetIndexPath(l.dir, baseOffset))
	l.removeFile(timeIndexPath(l.dir, baseOffset))
}

// removeFile removes a name, if present. A removal that fails leaves a
// file recovery will tidy or ignore, so it is logged, not returned.
func (l *Log) removeFile(name string) {
	err := l.world.FS.Remove(name)
	switch {
	case err == nil:
		l.directoryDirty = true
	case !errors.Is(err, fs.ErrNotExist):
		l.logger().Warn("file not removed", "file", name, "error", err)
	}
}

// halt stops the node: continuing could report as durable what a failed
// sync or a half-undone write may have lost. Open recovers from the disk.
func (l *Log) halt(reason error) {
	if l.failure != nil {
		return
	}
	l.failure = fmt.Errorf("%w: %v", ErrHalted, reason)
	l.logger().Error("halting node", "reason", reason)
	l.world.Halt(reason)
}
