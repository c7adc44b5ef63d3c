package simdisk

// Syncs: each Sync or SyncDir captures how far its inode's pending list
// reaches now, draws a latency and an outcome, and completes as a kernel
// event owned by the machine's process. A crash voids it either way: the
// event dies with the process's incarnation, and the disk's generation
// check stops it if the test crashed only the disk.

// syncFile starts a sync of a file inode's pending operations.
func (d *Disk) syncFile(in *inode, name string, done func(error)) {
	covers := in.operationsIssued
	failed := d.chance(d.faults.SyncFailure)
	generation := d.generation
	d.scheduleCompletion(in, "disk.sync", func() {
		if d.generation != generation {
			return // the disk crashed since: the sync is void
		}
		covered := 0
		for covered < len(in.pending) && in.pending[covered].sequence < covers {
			covered++
		}
		if failed {
			d.stats.SyncsFailed++
		} else {
			for _, op := range in.pending[:covered] {
				in.durableData = op.applyOnSync(in.durableData)
			}
			d.stats.SyncsCompleted++
		}
		// Failed or not, the covered operations leave the pending list:
		// a failed writeback marks the pages clean.
		// Shift the rest down in place: a sync completes for nearly
		// every append, and a fresh array each time was a large share of
		// the simulator's allocations.
		left := copy(in.pending, in.pending[covered:])
		clear(in.pending[left:]) // let the written bytes go
		in.pending = in.pending[:left]
		done(d.syncError("sync", name, failed))
	})
}

// SyncDir implements core.FS.
func (d *Disk) SyncDir(dir string, done func(error)) {
	directory, err := d.lookup("syncdir", dir)
	if err != nil {
		d.failLater("disk.syncdir", done, err)
		return
	}
	if !directory.directory {
		d.failLater("disk.syncdir", done, pathError("syncdir", dir, errNotDirectory))
		return
	}
	covers := d.namespace.issued + 1 // operations numbered below this began before
	failed := d.chance(d.faults.SyncFailure)
	generation := d.generation
	d.scheduleCompletion(directory, "disk.syncdir", func() {
		if d.generation != generation {
			return // the disk crashed since: the sync is void
		}
		d.completeSyncDir(directory.number, covers, failed)
		done(d.syncError("syncdir", dir, failed))
	})
}

// completeSyncDir marks the directory synced for every pending operation
// issued before the sync began, then makes durable each operation that is
// now covered everywhere, in issue order. A failed sync drops the
// operations it covered instead.
func (d *Disk) completeSyncDir(directory inodeNumber, covers uint64, failed bool) {
	if failed {
		d.stats.SyncsFailed++
	} else {
		d.stats.SyncsCompleted++
	}
	kept := d.namespace.pending[:0]
	for i := range d.namespace.pending {
		op := &d.namespace.pending[i]
		if op.sequence < covers {
			for j, touched := range op.directories[:op.directoryCount] {
				if touched == directory {
					op.covered[j] = true
					op.dropped = op.dropped || failed
				}
			}
		}
		switch {
		case op.dropped:
		case op.fullyCovered():
			d.applyDurably(op)
		default:
			kept = append(kept, *op) // at or before i: never overwrites one yet to be read
		}
	}
	clear(d.namespace.pending[len(kept):])
	d.namespace.pending = kept
}

// scheduleCompletion schedules fn after a drawn latency, and after every
// completion already scheduled for the inode, so they run in issue order.
// fn runs even if the disk crashed meanwhile: each completion checks the
// disk's generation itself, which saves wrapping it in a second closure
// for every sync.
func (d *Disk) scheduleCompletion(in *inode, label string, fn func()) {
	now := d.kernel.Now()
	at := now + d.drawLatency()
	if at <= in.lastCompletionAt {
		at = in.lastCompletionAt + 1
	}
	in.lastCompletionAt = at
	d.kernel.ScheduleEvent(at-now, d.owner, label, fn)
}

// failLater reports err to done on a later turn of the loop.
func (d *Disk) failLater(label string, done func(error), err error) {
	d.kernel.ScheduleEvent(0, d.owner, label, func() { done(err) })
}

// drawLatency draws a sync latency in [SyncLatencyMin, SyncLatencyMax].
func (d *Disk) drawLatency() int64 {
	low, high := int64(d.faults.SyncLatencyMin), int64(d.faults.SyncLatencyMax)
	if high <= low {
		return low
	}
	return low + d.rng.Int64N(high-low+1)
}

// syncError is what a completed sync reports.
func (d *Disk) syncError(op, name string, failed bool) error {
	if failed {
		return pathError(op, name, errSyncFailed)
	}
	return nil
}
