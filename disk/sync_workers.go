package disk

import (
	"fmt"
	"hash/fnv"
	"io/fs"
	"os"

	"golang.org/x/sys/unix"
)

// Bounds of the sync machinery. Syncs are few (group commit makes one fsync
// cover every append since the last), so a handful of workers keeps several
// devices busy, and the queue only absorbs bursts such as a restart syncing
// every partition at once. When the queue is full, Sync waits for room:
// backpressure on the loop rather than a failed sync, which would halt the
// node.
const (
	syncWorkerCount = 4
	syncQueueLength = 1024 // jobs queued over all workers

	syncQueueLengthPerWorker = syncQueueLength / syncWorkerCount
)

// Each worker has its own queue, and every sync of one file or directory
// goes to the same worker: so completions for one file are posted in the
// order the syncs were issued, as in the simulator, and a caller may count
// on sync N finishing before sync N+1.

// syncJob is one fsync to run on a worker.
type syncJob struct {
	run      func() error // the sync itself, on the worker
	done     func(error)  // the caller's callback, posted to the loop
	finished func()       // optional: release what run used, on the worker
	key      uint64       // which file or directory: picks the worker
}

func (d *FS) startWorkers() {
	d.queues = make([]chan syncJob, syncWorkerCount)
	for i := range d.queues {
		d.queues[i] = make(chan syncJob, syncQueueLengthPerWorker)
		d.workers.Add(1)
		go d.syncWorker(d.queues[i])
	}
}

// syncWorker runs the jobs of its queue until Close closes it.
func (d *FS) syncWorker(queue <-chan syncJob) {
	defer d.workers.Done()
	for job := range queue {
		err := mapError(job.run())
		if job.finished != nil {
			job.finished()
		}
		done := job.done
		d.post(func() { done(err) })
	}
}

// enqueue hands a job to the workers, or fails it (on the loop, later) once
// the disk is closed.
func (d *FS) enqueue(job syncJob) {
	d.jobsMutex.Lock()
	if d.closed {
		d.jobsMutex.Unlock()
		if job.finished != nil {
			job.finished()
		}
		d.post(func() { job.done(errDiskClosed) })
		return
	}
	d.queues[job.key%syncWorkerCount] <- job
	d.jobsMutex.Unlock()
}

// syncDirectory opens a directory and fsyncs it, making its entries durable.
func syncDirectory(path string) error {
	directory, err := os.OpenFile(path, os.O_RDONLY|unix.O_DIRECTORY, 0)
	if err != nil {
		return err
	}
	syncErr := directory.Sync()
	closeErr := directory.Close()
	if syncErr != nil {
		return syncErr
	}
	if closeErr != nil {
		return &fs.PathError{Op: "close", Path: path, Err: fmt.Errorf("after directory fsync: %w", closeErr)}
	}
	return nil
}

// directoryKey spreads directories over the workers by an FNV-1a hash of
// their path.
func directoryKey(path string) uint64 {
	hash := fnv.New64a()
	hash.Write([]byte(path))
	return hash.Sum64()
}
