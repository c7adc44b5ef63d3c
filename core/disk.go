package core

import "errors"

// FS is a node's disk: a tree of files and directories under one root.
// Names are slash-separated and relative to that root and must satisfy
// io/fs.ValidPath ("." is the root itself); errors for missing names satisfy
// errors.Is(err, fs.ErrNotExist). Rename works on directories too, and a
// removed file stays usable through handles already open, as on POSIX.
// Completions of the syncs of one file or directory run in the order the
// syncs were issued.
//
// Writes land in a page cache and are durable only once a sync that began
// after them completes: File.Sync for a file's bytes and size, SyncDir for the
// entries of a directory (a created, removed or renamed name). A crash keeps
// what completed syncs covered; anything else may be lost or torn. Reads see
// every write, synced or not.
type FS interface {
	// OpenFile opens name for reading and writing. When create is true a
	// missing file is created empty; its name is durable only after
	// SyncDir of its directory.
	OpenFile(name string, create bool) (File, error)

	// ReadDir returns the names (not paths) of dir's entries, sorted.
	ReadDir(dir string) ([]string, error)

	// MkdirAll creates dir and any missing parents.
	MkdirAll(dir string) error

	// Remove deletes a file or an empty directory.
	Remove(name string) error

	// Rename moves from to to, atomically replacing to if it exists.
	Rename(from, to string) error

	// SyncDir makes dir's entries durable and then calls done on the loop.
	SyncDir(dir string, done func(error))
}

// File is an open file. It is used from one loop only.
type File interface {
	// ReadAt follows io.ReaderAt: n < len(p) only with an error, io.EOF
	// at the end of the file.
	ReadAt(p []byte, offset int64) (n int, err error)

	// WriteAt writes p at offset into the page cache, extending the file
	// if needed. A short write returns an error, ErrDiskFull when space
	// ran out; the bytes it did write stay written.
	WriteAt(p []byte, offset int64) (n int, err error)

	// Truncate sets the file's size, dropping or zero-extending its tail.
	Truncate(size int64) error

	// Size is the current size, unsynced writes included.
	Size() (int64, error)

	// Sync makes every write and truncate made before the call durable,
	// then calls done on the loop. A non-nil error means the sync failed
	// and the kernel may have dropped the dirty pages it covered: the
	// caller must assume everything unsynced is lost.
	Sync(done func(error))

	// Close releases the file. Syncs already begun still complete.
	Close() error
}

// ErrDiskFull is returned (wrapped) by writes that ran out of space.
var ErrDiskFull = errors.New("disk full")
