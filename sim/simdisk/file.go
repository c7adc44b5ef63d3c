package simdisk

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"slices"

	"sluice/core"
)

// File is a handle on one file inode. It keeps working after its name is
// removed or renamed, as on POSIX, and stops at Close or at a crash.
type File struct {
	disk       *Disk
	inode      *inode
	name       string // as opened, for errors
	generation uint64 // the disk's generation when opened
	closed     bool
}

var _ core.File = (*File)(nil)

// usable returns the error every method gives on a closed handle or one
// opened before the latest crash.
func (f *File) usable(op string) error {
	if f.closed {
		return pathError(op, f.name, fs.ErrClosed)
	}
	if f.generation != f.disk.generation {
		return pathError(op, f.name, errHandleFromBeforeCrash)
	}
	return nil
}

// ReadAt implements core.File. With Faults.ReadCorruption it flips one bit
// of what it returns.
func (f *File) ReadAt(p []byte, offset int64) (int, error) {
	if err := f.usable("read"); err != nil {
		return 0, err
	}
	if offset < 0 {
		return 0, pathError("read", f.name, errNegative)
	}
	data := f.inode.data
	if offset >= int64(len(data)) {
		if len(p) == 0 {
			return 0, nil
		}
		return 0, io.EOF
	}
	n := copy(p, data[offset:])
	if n > 0 && f.disk.chance(f.disk.faults.ReadCorruption) {
		bit := f.disk.rng.IntN(8 * n)
		p[bit/8] ^= 1 << (bit % 8)
		f.disk.stats.ReadsCorrupted++
	}
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

// WriteAt implements core.File. A write that would pass CapacityBytes (or
// fileBytesMax) writes what fits and reports why it stopped.
func (f *File) WriteAt(p []byte, offset int64) (int, error) {
	if err := f.usable("write"); err != nil {
		return 0, err
	}
	if offset < 0 {
		return 0, pathError("write", f.name, errNegative)
	}
	if len(p) == 0 {
		return 0, nil
	}
	size := int64(len(f.inode.data))
	end, refusal := f.disk.allowedEnd(size)
	n := len(p)
	var err error
	if offset+int64(len(p)) > end {
		n = int(max(0, min(int64(len(p)), end-offset)))
		err = pathError("write", f.name, refusal)
		if errors.Is(refusal, core.ErrDiskFull) {
			f.disk.stats.WritesRefusedFull++
		}
	}
	if n > 0 {
		f.record(fileOperation{offset: offset, length: int64(n)}, p[:n])
	}
	return n, err
}

// allowedEnd is how far a file of the given size may grow, and the error
// that stops it there.
func (d *Disk) allowedEnd(size int64) (int64, error) {
	end, refusal := int64(fileBytesMax), errFileTooLarge
	if d.faults.CapacityBytes > 0 {
		if spaceEnd := size + max(0, d.faults.CapacityBytes-d.usage); spaceEnd < end {
			end, refusal = spaceEnd, core.ErrDiskFull
		}
	}
	return end, refusal
}

// Truncate implements core.File. Growing past capacity fails whole.
func (f *File) Truncate(size int64) error {
	if err := f.usable("truncate"); err != nil {
		return err
	}
	if size < 0 {
		return pathError("truncate", f.name, errNegative)
	}
	if end, refusal := f.disk.allowedEnd(int64(len(f.inode.data))); size > end {
		if errors.Is(refusal, core.ErrDiskFull) {
			f.disk.stats.WritesRefusedFull++
		}
		return pathError("truncate", f.name, refusal)
	}
	f.record(fileOperation{truncate: true, size: size}, nil)
	return nil
}

// record applies an operation to the current image and queues it for the
// durable one; p is a write's bytes. The operation keeps what it replaced
// in the current image, or, when the file keeps its durable image apart,
// a copy of p (see inode).
func (f *File) record(op fileOperation, p []byte) {
	in := f.inode
	op.sequence = in.operationsIssued
	in.operationsIssued++
	op.oldSize = int64(len(in.data))
	switch {
	case in.durableApart:
		op.bytes = slices.Clone(p)
	case op.truncate && op.size < op.oldSize:
		op.replaced = slices.Clone(in.data[op.size:])
	case !op.truncate && op.offset < op.oldSize:
		op.replaced = slices.Clone(in.data[op.offset:min(op.oldSize, op.offset+op.length)])
	}
	if op.truncate {
		in.data = resize(in.data, op.size)
	} else {
		in.data = writeInto(in.data, op.offset, p)
	}
	if len(in.data) > fileBytesMax {
		panic(fmt.Sprintf("simdisk: %s grew to %d bytes, past fileBytesMax", f.name, len(in.data)))
	}
	f.disk.resized(in, op.oldSize, int64(len(in.data)))
	if in.pending == nil {
		// Most files take two operations before their first sync (a
		// state file's truncate and write, say): room for both at once.
		in.pending = make([]fileOperation, 0, 2)
	}
	in.pending = append(in.pending, op)
}

// Size implements core.File.
func (f *File) Size() (int64, error) {
	if err := f.usable("size"); err != nil {
		return 0, err
	}
	return int64(len(f.inode.data)), nil
}

// Sync implements core.File.
func (f *File) Sync(done func(error)) {
	if err := f.usable("sync"); err != nil {
		f.disk.failLater("disk.sync", done, err)
		return
	}
	f.disk.syncFile(f.inode, f.name, done)
}

// Close implements core.File. Syncs already begun still complete: they
// belong to the inode, not the handle.
func (f *File) Close() error {
	if err := f.usable("close"); err != nil {
		return err
	}
	f.closed = true
	f.inode.handles--
	f.disk.settle(f.inode)
	return nil
}
