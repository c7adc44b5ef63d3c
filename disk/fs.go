package disk

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"

	"sluice/core"
)

// Permissions for what the broker creates: readable by operators, writable
// by the broker's user only.
const (
	filePermissions      fs.FileMode = 0o644
	directoryPermissions fs.FileMode = 0o755
)

// errInvalidName explains why a name was refused.
var errInvalidName = fmt.Errorf("%w: a name is a slash path relative to the disk root, without \"..\", \".\" elements, empty elements or a leading slash", fs.ErrInvalid)

// errDiskClosed is what a sync gets after FS.Close.
var errDiskClosed = fmt.Errorf("disk: closed: %w", fs.ErrClosed)

// FS is core.FS over the directory tree under one root.
//
// FS and its files are used from one goroutine, the node's loop. The only
// other goroutines are the sync workers, which touch nothing but the queue,
// a file's descriptor (through its raw connection, which holds a reference
// on it) and the file's count of syncs in flight.
type FS struct {
	root string
	post func(func())

	// sizes holds the size of every open file, shared by all handles of
	// one file so a write through one is seen by Size on another.
	// Loop only.
	sizes map[fileIdentity]*sharedSize

	// queues feed the sync workers, one queue each. The mutex makes a
	// send and Close exclusive, so nothing is sent on a closed channel.
	jobsMutex sync.Mutex
	queues    []chan syncJob
	closed    bool
	workers   sync.WaitGroup

	// completionsPromised counts Sync and SyncDir calls: each posts
	// exactly one completion. Loop only; tests drain by it.
	completionsPromised uint64
}

var _ core.FS = (*FS)(nil)

// New returns the disk rooted at directory root, creating it if missing, and
// starts its sync workers. post delivers a completion to the node's loop;
// the workers call it from their own goroutines, so it must be safe for
// concurrent use and must not wait on the loop for long: a loop blocked
// handing a sync to a full queue while the workers wait in post would
// deadlock (give the loop's inbox room for syncQueueLength completions).
func New(root string, post func(func())) (*FS, error) {
	if post == nil {
		return nil, errors.New("disk: New needs a post function to deliver completions to the loop")
	}
	absolute, err := filepath.Abs(root)
	if err != nil {
		return nil, fmt.Errorf("disk: root %q: %w", root, err)
	}
	if err := os.MkdirAll(absolute, directoryPermissions); err != nil {
		return nil, fmt.Errorf("disk: creating root: %w", err)
	}
	d := &FS{
		root:  absolute,
		post:  post,
		sizes: map[fileIdentity]*sharedSize{},
	}
	d.startWorkers()
	return d, nil
}

// Root is the absolute directory the disk lives in.
func (d *FS) Root() string { return d.root }

// path turns a core name into an OS path under the root, refusing names
// that are not io/fs paths: those with "..", "." or empty elements, or a
// leading slash, could reach outside the root or name one file two ways.
func (d *FS) path(op, name string) (string, error) {
	if !fs.ValidPath(name) {
		return "", &fs.PathError{Op: op, Path: name, Err: errInvalidName}
	}
	return filepath.Join(d.root, filepath.FromSlash(name)), nil
}

// entryPath is path for names that must be an entry of some directory, so
// not the root itself.
func (d *FS) entryPath(op, name string) (string, error) {
	if name == "." {
		return "", &fs.PathError{Op: op, Path: name, Err: fmt.Errorf("%w: the disk root cannot be removed or renamed", fs.ErrInvalid)}
	}
	return d.path(op, name)
}

// OpenFile implements core.FS.
func (d *FS) OpenFile(name string, create bool) (core.File, error) {
	path, err := d.path("open", name)
	if err != nil {
		return nil, err
	}
	flags := os.O_RDWR
	if create {
		flags |= os.O_CREATE
	}
	file, err := os.OpenFile(path, flags, filePermissions)
	if err != nil {
		return nil, mapError(err)
	}
	f, err := d.newFile(name, file)
	if err != nil {
		file.Close()
		return nil, err
	}
	return f, nil
}

// ReadDir implements core.FS. os.ReadDir already sorts by name.
func (d *FS) ReadDir(dir string) ([]string, error) {
	path, err := d.path("readdir", dir)
	if err != nil {
		return nil, err
	}
	entries, err := os.ReadDir(path)
	if err != nil {
		return nil, mapError(err)
	}
	names := make([]string, len(entries))
	for i, entry := range entries {
		names[i] = entry.Name()
	}
	return names, nil
}

// MkdirAll implements core.FS.
func (d *FS) MkdirAll(dir string) error {
	path, err := d.path("mkdir", dir)
	if err != nil {
		return err
	}
	return mapError(os.MkdirAll(path, directoryPermissions))
}

// Remove implements core.FS.
func (d *FS) Remove(name string) error {
	path, err := d.entryPath("remove", name)
	if err != nil {
		return err
	}
	return mapError(os.Remove(path))
}

// Rename implements core.FS.
func (d *FS) Rename(from, to string) error {
	fromPath, err := d.entryPath("rename", from)
	if err != nil {
		return err
	}
	toPath, err := d.entryPath("rename", to)
	if err != nil {
		return err
	}
	return mapError(os.Rename(fromPath, toPath))
}

// SyncDir implements core.FS: a worker opens the directory and fsyncs it,
// which makes its entries (created, removed and renamed names) durable.
func (d *FS) SyncDir(dir string, done func(error)) {
	d.completionsPromised++
	path, err := d.path("syncdir", dir)
	if err != nil {
		d.post(func() { done(err) })
		return
	}
	d.enqueue(syncJob{run: func() error { return syncDirectory(path) }, done: done, key: directoryKey(path)})
}

// Close stops the sync workers once every sync already handed to them has
// completed and been posted. Syncs asked for afterwards fail. Files stay
// usable for reads and writes until closed themselves.
func (d *FS) Close() error {
	d.jobsMutex.Lock()
	if d.closed {
		d.jobsMutex.Unlock()
		return errDiskClosed
	}
	d.closed = true
	for _, queue := range d.queues {
		close(queue)
	}
	d.jobsMutex.Unlock()
	d.workers.Wait()
	return nil
}
