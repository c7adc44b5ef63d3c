package quorum

import (
	"errors"
	"fmt"
	"path"
	"sort"
)

// Taking, loading and adopting snapshots. A node snapshots its own state
// once SnapshotEveryRecords offsets were committed since its last snapshot,
// and then moves its log start up to the snapshot: the records before it
// are no longer needed here, and a follower that needs them downloads the
// snapshot instead (fetch_snapshot.go).

// loadSnapshots finds the snapshots on disk and restores the newest that
// reads back whole. At Open.
func (q *Quorum) loadSnapshots() error {
	ids, err := listSnapshots(q.world.FS, q.dir)
	if err != nil {
		return err
	}
	q.snapshots = ids
	q.appliedEnd = q.metadataLog.StartOffset()
	if q.snapshotter == nil {
		if q.appliedEnd > 0 {
			return fmt.Errorf("%w: the log starts at %d and there is no Snapshotter", errSnapshotMissing, q.appliedEnd)
		}
		return nil
	}
	for i := len(ids) - 1; i >= 0; i-- {
		content, err := readSnapshot(q.world.FS, q.dir, ids[i])
		if errors.Is(err, errBadData) {
			// Written whole and synced, yet unreadable: the disk
			// damaged it. An older snapshot may still do.
			q.logger.Warn("snapshot unreadable; trying an older one", "snapshot", ids[i].String(), "error", err)
			continue
		}
		if err != nil {
			return err
		}
		if content.id.endOffset < q.metadataLog.StartOffset() {
			break
		}
		return q.adoptSnapshot(content)
	}
	if q.appliedEnd > 0 {
		return fmt.Errorf("%w: the log starts at %d; snapshots %v", errSnapshotMissing, q.appliedEnd, ids)
	}
	return nil
}

// adoptSnapshot makes a snapshot this node's state: the Snapshotter
// restores it, delivery continues after it, and the log is made to start at
// it (see log_reset.go).
func (q *Quorum) adoptSnapshot(c snapshotContent) error {
	if c.id.endOffset < q.appliedEnd {
		panic(q.describeLog(fmt.Sprintf("adopting snapshot %s below what was applied", c.id)))
	}
	if err := q.snapshotter.Restore(c.lastOffset, c.records); err != nil {
		return fmt.Errorf("quorum: restoring snapshot %s: %w", c.id, err)
	}
	q.appliedEnd = c.id.endOffset
	q.highWatermark = max(q.highWatermark, c.id.endOffset)
	q.eventLogger().Info("restored snapshot", "snapshot", c.id.String(), "records", len(c.records))
	q.alignLogWithSnapshot(c.id)
	q.maybeCaughtUp()
	return nil
}

// maybeSnapshot takes a snapshot if one is due and none is being written.
func (q *Quorum) maybeSnapshot() {
	every := int64(q.config.SnapshotEveryRecords)
	latest, _ := q.latestSnapshot()
	if every == 0 || q.snapshotWriting || q.logReset != nil || q.appliedEnd-latest.endOffset < every {
		return
	}
	lastOffset, records := q.snapshotter.Snapshot()
	if lastOffset >= q.appliedEnd {
		panic(q.describeLog(fmt.Sprintf("the Snapshotter's last offset %d is past what was delivered", lastOffset)))
	}
	id := snapshotID{endOffset: q.appliedEnd, epoch: q.logEpochAt(q.appliedEnd - 1)}
	content := encodeSnapshot(snapshotContent{id: id, lastOffset: lastOffset, records: records}, q.world.Clock.Now().UnixMilli())
	if len(content) > snapshotBytesMax {
		q.logger.Warn("snapshot too large; not taken", "bytes", len(content), "max", snapshotBytesMax)
		return
	}
	q.snapshotWriting = true
	writeSnapshotFile(q.world, q.dir, id, content, func(err error) {
		if q.closed {
			return
		}
		q.snapshotWriting = false
		if err != nil {
			// A full disk: the next commit tries again.
			q.logger.Warn("snapshot not written", "snapshot", id.String(), "error", err)
			return
		}
		q.eventLogger().Info("took snapshot", "snapshot", id.String(), "records", len(records))
		q.addSnapshot(id)
		if q.logReset == nil && id.endOffset > q.metadataLog.StartOffset() {
			if err := q.metadataLog.AdvanceStartOffset(id.endOffset); err != nil {
				q.logger.Warn("log start not moved to the snapshot", "snapshot", id.String(), "error", err)
			}
		}
	})
}

// addSnapshot records a new snapshot file and removes all but the newest
// snapshotsKept.
func (q *Quorum) addSnapshot(id snapshotID) {
	q.snapshots = append(q.snapshots, id)
	sort.Slice(q.snapshots, func(i, j int) bool { return q.snapshots[i].endOffset < q.snapshots[j].endOffset })
	for len(q.snapshots) > snapshotsKept {
		old := q.snapshots[0]
		q.snapshots = q.snapshots[1:]
		if err := q.world.FS.Remove(path.Join(q.dir, old.fileName())); err != nil {
			q.logger.Warn("old snapshot not removed", "snapshot", old.String(), "error", err)
		}
	}
}

// latestSnapshot is the newest snapshot on disk.
func (q *Quorum) latestSnapshot() (snapshotID, bool) {
	if len(q.snapshots) == 0 {
		return snapshotID{}, false
	}
	return q.snapshots[len(q.snapshots)-1], true
}

// snapshotEndingAt is the snapshot whose end offset is offset.
func (q *Quorum) snapshotEndingAt(offset int64) (snapshotID, bool) {
	for _, id := range q.snapshots {
		if id.endOffset == offset {
			return id, true
		}
	}
	return snapshotID{}, false
}

// logEpochAt is the epoch of the batch holding offset, by the log's epoch
// cache; -1 if the cache does not say.
func (q *Quorum) logEpochAt(offset int64) int32 {
	epoch := int32(-1)
	for _, e := range q.metadataLog.EpochEntries() {
		if e.StartOffset > offset {
			break
		}
		epoch = e.Epoch
	}
	return epoch
}
