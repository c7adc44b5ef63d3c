package disk

import (
	"fmt"
	"io/fs"
	"os"
	"sync"
	"syscall"

	"sluice/core"
)

// fileIdentity names a file independently of its path, so handles opened
// under different names (or before a rename) share one size.
type fileIdentity struct {
	device uint64
	inode  uint64
}

// sharedSize is the size of one open file, shared by its handles. Loop only.
type sharedSize struct {
	bytes   int64
	handles int
}

// File is core.File over an *os.File, using pread and pwrite so a handle
// has no offset to share or race on.
type File struct {
	disk     *FS
	name     string
	file     *os.File
	raw      syscall.RawConn
	identity fileIdentity
	size     *sharedSize
	closed   bool // loop only

	// The descriptor must outlive Close while a sync still needs it: a
	// closed descriptor number can be reused at once, and fdatasync would
	// then flush (and report on) somebody else's file. So Close only
	// marks the request and the last sync out closes the descriptor.
	syncsMutex     sync.Mutex
	syncsRunning   int
	closeRequested bool
}

var _ core.File = (*File)(nil)

// newFile wraps an opened file and registers it for size sharing.
func (d *FS) newFile(name string, file *os.File) (*File, error) {
	info, err := file.Stat()
	if err != nil {
		return nil, err
	}
	status, ok := info.Sys().(*syscall.Stat_t)
	if !ok {
		return nil, fmt.Errorf("disk: open %s: no device and inode numbers from stat", name)
	}
	raw, err := file.SyscallConn()
	if err != nil {
		return nil, err
	}
	identity := fileIdentity{device: uint64(status.Dev), inode: uint64(status.Ino)}
	size := d.sizes[identity]
	if size == nil {
		size = &sharedSize{bytes: info.Size()}
		d.sizes[identity] = size
	}
	size.handles++
	return &File{disk: d, name: name, file: file, raw: raw, identity: identity, size: size}, nil
}

// errorIfClosed is the error every method returns once Close was called.
func (f *File) errorIfClosed(op string) error {
	if f.closed {
		return &fs.PathError{Op: op, Path: f.name, Err: fs.ErrClosed}
	}
	return nil
}

// ReadAt implements core.File; os.File.ReadAt already returns io.EOF on a
// short read at the end.
func (f *File) ReadAt(p []byte, offset int64) (int, error) {
	if err := f.errorIfClosed("read"); err != nil {
		return 0, err
	}
	return f.file.ReadAt(p, offset)
}

// WriteAt implements core.File.
func (f *File) WriteAt(p []byte, offset int64) (int, error) {
	if err := f.errorIfClosed("write"); err != nil {
		return 0, err
	}
	n, err := f.file.WriteAt(p, offset)
	if n > 0 && offset+int64(n) > f.size.bytes {
		f.size.bytes = offset + int64(n)
	}
	return n, mapError(err)
}

// Truncate implements core.File.
func (f *File) Truncate(size int64) error {
	if err := f.errorIfClosed("truncate"); err != nil {
		return err
	}
	if size < 0 {
		return &fs.PathError{Op: "truncate", Path: f.name, Err: fmt.Errorf("%w: negative size %d", fs.ErrInvalid, size)}
	}
	if err := f.file.Truncate(size); err != nil {
		return mapError(err)
	}
	f.size.bytes = size
	return nil
}

// Size implements core.File from memory: no syscall.
func (f *File) Size() (int64, error) {
	if err := f.errorIfClosed("size"); err != nil {
		return 0, err
	}
	return f.size.bytes, nil
}

// Sync implements core.File: a worker runs fdatasync, which makes the data
// and the size durable (not the timestamps, which Sluice never reads).
func (f *File) Sync(done func(error)) {
	f.disk.completionsPromised++
	if err := f.errorIfClosed("sync"); err != nil {
		f.disk.post(func() { done(err) })
		return
	}
	f.syncsMutex.Lock()
	f.syncsRunning++
	f.syncsMutex.Unlock()
	f.disk.enqueue(syncJob{run: f.fdatasync, done: done, finished: f.syncFinished, key: f.identity.inode})
}

// fdatasync runs on a worker. Control holds a reference on the descriptor
// for the duration of the call.
func (f *File) fdatasync() error {
	var syncErr error
	err := f.raw.Control(func(descriptor uintptr) {
		syncErr = fdatasync(int(descriptor))
	})
	if err != nil {
		return err
	}
	if syncErr != nil {
		return &fs.PathError{Op: "fdatasync", Path: f.name, Err: syncErr}
	}
	return nil
}

// syncFinished runs on a worker after each sync, and closes the descriptor
// if Close came while syncs were running.
func (f *File) syncFinished() {
	f.syncsMutex.Lock()
	defer f.syncsMutex.Unlock()
	if f.syncsRunning <= 0 {
		panic(fmt.Sprintf("disk: %s: a sync finished but none was running", f.name))
	}
	f.syncsRunning--
	if f.syncsRunning == 0 && f.closeRequested {
		// Nobody is left to hear a close error; the syncs that mattered
		// have reported theirs.
		f.file.Close()
	}
}

// Close implements core.File. Syncs already begun still complete.
func (f *File) Close() error {
	if err := f.errorIfClosed("close"); err != nil {
		return err
	}
	f.closed = true
	f.size.handles--
	if f.size.handles == 0 {
		delete(f.disk.sizes, f.identity)
	}
	f.syncsMutex.Lock()
	if f.syncsRunning > 0 {
		f.closeRequested = true
		f.syncsMutex.Unlock()
		return nil
	}
	f.syncsMutex.Unlock()
	return f.file.Close()
}
