package simdisk

import (
	"fmt"
	"slices"
)

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
	data    []byte          // current image: what reads see
	pending []fileOperation // since the last sync completed or failed; sequence ascending
	// operationsIssued is the sequence number the next operation gets.
	operationsIssued uint64
	// The durable image, what survives a crash, is kept one of two ways.
	// Normally it is implied: it is the current image with the pending
	// operations undone, newest first, each operation keeping what it
	// replaced (nothing, for an append, the usual write). A write then
	// copies its bytes once, into the current image, and a sync that
	// completes only drops operations. A failed sync breaks the
	// relation: the operations it covered stay in the current image
	// but never reach the durable one. From then until the next crash
	// the file keeps its durable image apart (durableApart), in
	// durableData, and its pending operations keep what they write,
	// for the syncs that cover them to apply.
	durableApart bool
	durableData  []byte

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

// fileOperation is one change to a file's contents, a write or a
// truncate, with what it takes to undo it and, once its file keeps its
// durable image apart, to apply it again (see inode).
type fileOperation struct {
	sequence uint64
	truncate bool
	offset   int64 // write: where
	length   int64 // write: how many bytes
	size     int64 // truncate: the new size
	oldSize  int64 // the file's size before the operation
	// replaced are the bytes of the old image the operation overwrote or
	// cut off (a private copy): for a write, those of its range below
	// oldSize; for a truncate, those from size to oldSize. Kept only
	// while the durable image is implied by the current one.
	replaced []byte
	// bytes are a write's bytes (a private copy), kept only while the
	// file keeps its durable image apart, and at a crash that lets the
	// write reach the media.
	bytes []byte
}

// undo returns image, as it was right after op, as it was before op. It
// may reuse image's array.
func (op *fileOperation) undo(image []byte) []byte {
	if op.truncate {
		image = resize(image, op.oldSize)
		if op.size < op.oldSize {
			copy(image[op.size:], op.replaced)
		}
		return image
	}
	copy(image[op.offset:], op.replaced)
	return image[:op.oldSize]
}

// applyTo returns image with the operation, whose bytes it keeps, applied.
func (op *fileOperation) applyTo(image []byte) []byte {
	if op.truncate {
		return resize(image, op.size)
	}
	return writeInto(image, op.offset, op.bytes)
}

// applyOnSync is applyTo for the durable image kept apart, at the sync
// that takes op off its file's pending list. A write's bytes are the
// operation's own copy, and nothing refers to them once the operation
// leaves the list, so a write at the start of an empty durable image
// becomes that image instead of being copied into a new one.
func (op *fileOperation) applyOnSync(image []byte) []byte {
	if !op.truncate && op.offset == 0 && len(image) == 0 && len(op.bytes) > 0 {
		return op.bytes
	}
	return op.applyTo(image)
}

// undoPending returns image, in's current image or a copy that it may
// overwrite, with every pending operation undone: the durable image, when
// it is implied. Each write among pending[from:to] first takes its bytes
// from the image, which holds them just then (the operations after it are
// undone already), for a caller that will apply it again.
func (in *inode) undoPending(image []byte, from, to int) []byte {
	for i := len(in.pending) - 1; i >= 0; i-- {
		op := &in.pending[i]
		if from <= i && i < to && !op.truncate {
			op.bytes = slices.Clone(image[op.offset : op.offset+op.length])
		}
		image = op.undo(image)
		op.replaced = nil
	}
	return image
}

// durableImage returns a copy of the file's durable image.
func (in *inode) durableImage() []byte {
	if in.durableApart {
		return slices.Clone(in.durableData)
	}
	image := slices.Clone(in.data)
	for i := len(in.pending) - 1; i >= 0; i-- {
		image = in.pending[i].undo(image)
	}
	return image
}

// keepDurableApart makes the file keep its durable image apart from now
// on, as it must once a sync failed: the image is the current one with
// every pending operation undone, and the operations from pending[from:],
// which stay pending, keep their bytes for the syncs that will cover them.
func (in *inode) keepDurableApart(from int) {
	in.durableData = in.undoPending(slices.Clone(in.data), from, len(in.pending))
	in.durableApart = true
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
