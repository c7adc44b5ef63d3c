package simdisk

import "sluice/sim/kernel"

// Syncs: each Sync or SyncDir captures how far its inode's pending list
// reaches now, draws a latency and an outcome, and completes as a kernel
// event owned by the machine's process. A crash voids it either way: the
// event dies with the process's incarnation, and the disk's generation
// check stops it if the test crashed only the disk.

// syncCompletion is a sync in flight, of a file or a directory: what its
// completion needs. It is the completion event's action (see Run), and the
// disk recycles it once it has run: a sync completes for nearly every
// append, and a closure for each was one of the simulator's larger shares
// of allocations. One whose event is dropped (its process crashed) is
// simply never recycled.
type syncCompletion struct {
	disk       *Disk
	in         *inode
	name       string // as the caller gave it, for errors
	covers     uint64 // the operations numbered below it are covered
	failed     bool
	generation uint64 // the disk's generation when the sync began
	done       func(error)
}

// Run completes the sync: the kernel calls it when the completion is due.
func (c *syncCompletion) Run() {
	d := c.disk
	// Copied out and recycled first: done may start the next sync,
	// which can take this one.
	sync := *c
	*c = syncCompletion{}
	d.spareCompletions = append(d.spareCompletions, c)
	if d.generation != sync.generation {
		return // the disk crashed since: the sync is void
	}
	op := "sync"
	if sync.in.directory {
		op = "syncdir"
		d.completeSyncDir(sync.in.number, sync.covers, sync.failed)
	} else {
		d.completeSyncFile(sync.in, sync.covers, sync.failed)
	}
	sync.done(d.syncError(op, sync.name, sync.failed))
}

// startSync schedules the completion of a sync of in covering the
// operations numbered below covers, drawing its outcome now.
func (d *Disk) startSync(in *inode, name string, covers uint64, done func(error)) {
	failed := d.chance(d.faults.SyncFailure)
	var c *syncCompletion
	if n := len(d.spareCompletions); n > 0 {
		c = d.spareCompletions[n-1]
		d.spareCompletions[n-1] = nil
		d.spareCompletions = d.spareCompletions[:n-1]
	} else {
		c = new(syncCompletion)
	}
	*c = syncCompletion{disk: d, in: in, name: name, covers: covers, failed: failed, generation: d.generation, done: done}
	label := "disk.sync"
	if in.directory {
		label = "disk.syncdir"
	}
	d.scheduleCompletion(in, label, c)
}

// syncFile starts a sync of a file inode's pending operations.
func (d *Disk) syncFile(in *inode, name string, done func(error)) {
	d.startSync(in, name, in.operationsIssued, done)
}

// completeSyncFile makes a file's pending operations numbered below covers
// durable, or drops them if the sync failed.
func (d *Disk) completeSyncFile(in *inode, covers uint64, failed bool) {
	covered := 0
	for covered < len(in.pending) && in.pending[covered].sequence < covers {
		covered++
	}
	switch {
	case failed:
		d.stats.SyncsFailed++
		if !in.durableApart {
			in.keepDurableApart(covered)
		}
	case in.durableApart:
		for i := range in.pending[:covered] {
			in.durableData = in.pending[i].applyOnSync(in.durableData)
		}
		d.stats.SyncsCompleted++
	default:
		// The durable image is implied: it gains the covered
		// operations as they leave the pending list.
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
	// Operations numbered below this began before.
	d.startSync(directory, dir, d.namespace.issued+1, done)
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
// It runs even if the disk crashed meanwhile: each completion checks the
// disk's generation itself.
func (d *Disk) scheduleCompletion(in *inode, label string, completion kernel.Action) {
	now := d.kernel.Now()
	at := now + d.drawLatency()
	if at <= in.lastCompletionAt {
		at = in.lastCompletionAt + 1
	}
	in.lastCompletionAt = at
	d.kernel.Post(at-now, d.owner, label, completion)
}

// failLater reports err to done on a later turn of the loop.
func (d *Disk) failLater(label string, done func(error), err error) {
	d.kernel.Post(0, d.owner, label, kernel.Func(func() { done(err) }))
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
