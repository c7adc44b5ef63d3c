package simdisk

import "fmt"

// inodeNumber names an inode. Entries hold numbers, not pointers, so a
// durable entry can name an inode the current namespace no longer has.
type inodeNumber uint64

const (
	// noInode in an entry change or durable entry means "no entry": a
	// removal.
	noInode inodeNumber = 0
	// rootInode is the root directory, which always exists.
	rootInode inodeNumber = 1
)

// inode is one file or directory.
type inode struct {
	number    inodeNumber
	directory bool

	// Files only.
	data        []byte          // current image: what reads see
	durableData []byte          // durable image: what survives a crash
	pending     []fileOperation // since the last sync completed or failed; sequence ascending
	// operationsIssued is the sequence number the next operation gets.
	operationsIssued uint64

	// Directories only.
	entries map[string]inodeNumber // current entries
	// names are the current entries' names, sorted: what ReadDir returns,
	// kept up to date as entries change rather than gathered from the map
	// and sorted at every call.
	names []string
	// durableEntries are what a crash keeps, including removals (with
	// target noInode) so that an older change applied late cannot undo a
	// newer one.
	durableEntries map[string]durableEntry

	links   int  // current entries naming this inode
	handles int  // open File handles
	counted bool // its size is in Disk.usage; true while links or handles remain

	// lastCompletionAt is the virtual time of the latest sync completion
	// scheduled for this inode: each new one is scheduled after it, so
	// completions run in issue order.
	lastCompletionAt int64
}

// durableEntry is a directory entry as it stands on the media, with the
// sequence number of the namespace operation that wrote it.
type durableEntry struct {
	target   inodeNumber
	sequence uint64
}

// live reports whether the inode is still reachable by a name or a handle;
// only live files count against capacity.
func (in *inode) live() bool { return in.links > 0 || in.handles > 0 }

// fileOperation is one change to a file's contents: a write or a truncate.
type fileOperation struct {
	sequence uint64
	truncate bool
	offset   int64  // write: where
	bytes    []byte // write: what (a private copy)
	size     int64  // truncate: the new size
}

// applyTo returns image with the operation applied.
func (op fileOperation) applyTo(image []byte) []byte {
	if op.truncate {
		return resize(image, op.size)
	}
	return writeInto(image, op.offset, op.bytes)
}

// applyOnSync is applyTo for the durable image, at the sync that takes op
// off its file's pending list. A write's bytes are the operation's own
// copy (File.WriteAt), and nothing refers to them once the operation
// leaves the list, so a write at the start of an empty durable image
// becomes that image instead of being copied into a new one: that is the
// first sync of nearly every file (each checkpoint, index and state file
// is written whole, then synced).
func (op fileOperation) applyOnSync(image []byte) []byte {
	if !op.truncate && op.offset == 0 && len(image) == 0 && len(op.bytes) > 0 {
		return op.bytes
	}
	return op.applyTo(image)
}

// resize returns image cut or zero-extended to size. Bytes cut off and
// later regrown read as zeros, never as what was there.
func resize(image []byte, size int64) []byte {
	if size < 0 {
		panic(fmt.Sprintf("simdisk: resize to negative size %d", size))
	}
	if size <= int64(len(image)) {
		return image[:size]
	}
	return grow(image, size, size)
}

// grow returns image lengthened to size, more than its length, with the
// bytes from its old end up to zeroTo (at most size) zeroed; the caller
// overwrites the rest. A write past the end zeroes only the hole before
// it: zeroing what it is about to copy over was a second pass over every
// byte appended.
func grow(image []byte, size, zeroTo int64) []byte {
	old := int64(len(image))
	if size > int64(cap(image)) {
		// Files grow by appends, a little at a time. Doubling the
		// capacity makes the copies of the image cost at most as much
		// again as the bytes appended; append's own policy grows large
		// slices by a quarter, which copied each image several times
		// over. make zeroes the new array.
		capacity := min(max(size, 2*int64(cap(image))), max(size, fileBytesMax))
		grown := make([]byte, size, capacity)
		copy(grown, image)
		return grown
	}
	image = image[:size]
	clear(image[old:zeroTo])
	return image
}

// writeInto returns image with p written at offset, extending it (with a
// zero-filled hole if offset is past the end) as needed.
func writeInto(image []byte, offset int64, p []byte) []byte {
	if offset < 0 {
		panic(fmt.Sprintf("simdisk: write at negative offset %d", offset))
	}
	if end := offset + int64(len(p)); end > int64(len(image)) {
		image = grow(image, end, max(offset, int64(len(image))))
	}
	copy(image[offset:], p)
	return image
}
