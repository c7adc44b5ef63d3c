package replica

import (
	"errors"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strconv"
	"strings"

	"sluice/core"
	"sluice/core/batch"
	"sluice/core/producer"
)

// Producer-state snapshots live beside the log's segments as
// <20-digit offset>.snapshot: the idempotent-producer state as of that
// offset. They only shorten recovery; the truth is the batch headers in the
// log, replayed from the newest snapshot at or below the log end.
const (
	snapshotSuffix = ".snapshot"
	// snapshotsKept is how many snapshots stay on disk: the newest might
	// be torn by a crash, so an older one stands behind it.
	snapshotsKept = 3
	// snapshotBytesMax bounds a snapshot file read at recovery.
	snapshotBytesMax = 64 << 20
	// replayChunkBytes is how much log a replay reads at a time.
	replayChunkBytes = 1 << 20
	// temporarySuffix marks a snapshot being written; log.Open removes
	// every file named so.
	temporarySuffix = ".tmp"
)

type producerSnapshots struct {
	w   core.World
	dir string

	// onDisk are the offsets of the snapshots in dir, ascending, when
	// known is set: as the listing at Open found them and this replica's
	// own renames and removals changed them since. Listing the directory
	// after every snapshot written (prune) was most of the time a
	// simulated seed spent listing directories. Only the open replica of
	// a partition writes snapshots in its directory: a closed one starts
	// none, and the one it was before a restart or a reopening could at
	// most finish a write its temporary file still stands for, which
	// log.Open removes (an Open that still finds one lists every time).
	// Once closed, a replica's own late writes list the directory again:
	// it may be another replica's by then.
	onDisk []int64
	known  bool
}

func newProducerSnapshots(w core.World, dir string) *producerSnapshots {
	return &producerSnapshots{w: w, dir: dir}
}

// snapshotName is fmt.Sprintf("%020d%s", offset, snapshotSuffix), built
// with strconv: partitions open, roll and prune snapshots often.
func snapshotName(offset int64) string {
	if offset < 0 {
		return fmt.Sprintf("%020d%s", offset, snapshotSuffix) // never: offsets are not negative
	}
	const digits = 20
	var b [digits + len(snapshotSuffix)]byte
	number := strconv.AppendInt(b[:0], offset, 10) // at most 19 digits
	copy(b[digits-len(number):], number)
	for i := range digits - len(number) {
		b[i] = '0'
	}
	copy(b[digits:], snapshotSuffix)
	return string(b[:])
}

// list lists the snapshot offsets on disk, ascending, and reports whether
// the directory holds a snapshot's temporary file.
func (s *producerSnapshots) list() (offsets []int64, temporary bool) {
	names, err := s.w.FS.ReadDir(s.dir)
	if err != nil {
		return nil, false
	}
	for _, name := range names {
		if digits, ok := strings.CutSuffix(name, snapshotSuffix); ok {
			if offset, err := strconv.ParseInt(digits, 10, 64); err == nil {
				offsets = append(offsets, offset)
			}
		}
		temporary = temporary || strings.HasSuffix(name, snapshotSuffix+temporarySuffix)
	}
	slices.Sort(offsets)
	return offsets, temporary
}

// listAndTrack lists the snapshots, and from then on keeps track of them
// itself unless a snapshot's temporary file is left: a write that may
// still rename it into place (see onDisk).
func (s *producerSnapshots) listAndTrack() []int64 {
	offsets, temporary := s.list()
	s.known = !temporary
	if s.known {
		s.onDisk = slices.Clone(offsets)
	}
	return offsets
}

// close stops the tracking: a closed replica's directory may be another's.
func (s *producerSnapshots) close() { s.onDisk, s.known = nil, false }

// renamed notes a snapshot renamed into place at offset.
func (s *producerSnapshots) renamed(offset int64) {
	if !s.known {
		return
	}
	if i, found := slices.BinarySearch(s.onDisk, offset); !found {
		s.onDisk = slices.Insert(s.onDisk, i, offset)
	}
}

// remove deletes the snapshot at offset, and reports whether it is gone.
func (s *producerSnapshots) remove(offset int64) bool {
	err := s.w.FS.Remove(path.Join(s.dir, snapshotName(offset)))
	return err == nil || errors.Is(err, fs.ErrNotExist)
}

// write saves the state as of offset, then deletes snapshots beyond the
// newest snapshotsKept. It is fire and forget: a snapshot lost to a crash
// only means a longer replay.
func (s *producerSnapshots) write(state *producer.State, offset int64) {
	final := path.Join(s.dir, snapshotName(offset))
	temporary := final + temporarySuffix
	f, err := s.w.FS.OpenFile(temporary, true)
	if err != nil {
		s.w.Log.Warn("producer snapshot not written", "offset", offset, "error", err)
		return
	}
	data := state.EncodeSnapshot(offset)
	if err := f.Truncate(0); err == nil {
		_, err = f.WriteAt(data, 0)
	}
	if err != nil {
		f.Close()
		s.w.FS.Remove(temporary)
		s.w.Log.Warn("producer snapshot not written", "offset", offset, "error", err)
		return
	}
	f.Sync(func(err error) {
		f.Close()
		if err != nil {
			s.w.Halt(fmt.Errorf("replica: syncing producer snapshot %s: %w", final, err))
			return
		}
		if err := s.w.FS.Rename(temporary, final); err != nil {
			s.w.Log.Warn("producer snapshot not renamed", "offset", offset, "error", err)
			return
		}
		s.renamed(offset)
		s.w.FS.SyncDir(s.dir, func(err error) {
			if err != nil {
				s.w.Halt(fmt.Errorf("replica: syncing %s: %w", s.dir, err))
			}
		})
		s.prune()
	})
}

// prune keeps the newest snapshotsKept snapshots.
func (s *producerSnapshots) prune() {
	if !s.known {
		offsets, _ := s.list()
		for len(offsets) > snapshotsKept {
			s.remove(offsets[0])
			offsets = offsets[1:]
		}
		return
	}
	excess := len(s.onDisk) - snapshotsKept
	s.removeWhere(func(i int, _ int64) bool { return i < excess })
}

// removeAbove deletes snapshots newer than offset, of those listed in
// offsets (the listing at Open, or the ones known since): after a
// truncation they describe batches that are gone.
func (s *producerSnapshots) removeAbove(offset int64, offsets []int64) {
	if !s.known {
		for _, o := range offsets {
			if o > offset {
				s.remove(o)
			}
		}
		return
	}
	s.removeWhere(func(_ int, o int64) bool { return o > offset })
}

// removeWhere removes, oldest first, the known snapshots doomed says
// must go, given their index and offset, and forgets those that went.
func (s *producerSnapshots) removeWhere(doomed func(i int, offset int64) bool) {
	kept := s.onDisk[:0]
	for i, o := range s.onDisk {
		if doomed(i, o) && s.remove(o) {
			continue
		}
		kept = append(kept, o)
	}
	s.onDisk = kept
}

// load returns the newest readable snapshot at or below limit, of those
// listed in offsets, or an empty state at the log start when there is
// none.
func (s *producerSnapshots) load(limit, logStart int64, offsets []int64) (*producer.State, int64) {
	for i := len(offsets) - 1; i >= 0; i-- {
		offset := offsets[i]
		if offset > limit || offset < logStart {
			continue
		}
		data, err := core.ReadWhole(s.w.FS, path.Join(s.dir, snapshotName(offset)), snapshotBytesMax)
		if err != nil {
			continue
		}
		state, at, err := producer.DecodeSnapshot(data)
		if err != nil || at != offset {
			s.w.Log.Warn("skipping unreadable producer snapshot", "offset", offset, "error", err)
			continue
		}
		return state, offset
	}
	return producer.NewState(), logStart
}

// rebuildProducerState loads the newest snapshot at or below the log end
// and replays the batches after it.
func (p *Partition) rebuildProducerState() error {
	end := p.log.EndOffset()
	// One listing serves both: removing the snapshots above end changes
	// nothing load looks at, which is at or below end. The first rebuild,
	// at Open, lists the directory; later ones (after a truncation) know
	// what it holds (see producerSnapshots.onDisk).
	var offsets []int64
	if p.snapshots.known {
		offsets = slices.Clone(p.snapshots.onDisk)
	} else {
		offsets = p.snapshots.listAndTrack()
	}
	p.snapshots.removeAbove(end, offsets)
	state, from := p.snapshots.load(end, p.log.StartOffset(), offsets)
	for from < end {
		// Scanned before the log reads again.
		chunk, err := p.log.ReadTransient(from, end, replayChunkBytes, true)
		if err != nil {
			return fmt.Errorf("replica: replaying producer state of %s-%d from %d: %w", p.Topic, p.Index, from, err)
		}
		sc := batch.Scanner{Buf: chunk}
		for sc.Next() {
			h := sc.Header()
			state.Record(h, h.MaxTimestamp)
			from = h.NextOffset()
		}
		if sc.Err() != nil {
			return fmt.Errorf("replica: replaying producer state of %s-%d at %d: %w", p.Topic, p.Index, from, sc.Err())
		}
	}
	p.producers = state
	return nil
}
