package core

import (
	"bytes"
	"errors"
	"fmt"
	"io"
)

// ErrTooBig is OpenSized's refusal of a file bigger than its bound.
var ErrTooBig = errors.New("file bigger than its bound")

// OpenSized opens a small file for reading and returns it with its size,
// refusing one bigger than bytesMax with an error wrapping ErrTooBig, so
// that a corrupt size never becomes a huge allocation. The caller closes
// the file. A missing file's error satisfies errors.Is(err,
// fs.ErrNotExist).
func OpenSized(fsys FS, name string, bytesMax int64) (File, int64, error) {
	f, err := fsys.OpenFile(name, false)
	if err != nil {
		return nil, 0, err
	}
	size, err := f.Size()
	if err != nil {
		f.Close()
		return nil, 0, err
	}
	if size > bytesMax {
		f.Close()
		return nil, 0, fmt.Errorf("%w: %s is %d bytes, more than %d", ErrTooBig, name, size, bytesMax)
	}
	return f, size, nil
}

// ReadWhole reads a small file whole (see OpenSized) into one buffer of
// exactly its size.
func ReadWhole(fsys FS, name string, bytesMax int64) ([]byte, error) {
	f, size, err := OpenSized(fsys, name, bytesMax)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data := make([]byte, size)
	n, err := f.ReadAt(data, 0)
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, err
	}
	if int64(n) != size {
		return nil, fmt.Errorf("%s: short read (%d of %d bytes)", name, n, size)
	}
	return data, nil
}

// ErrUnstable is ReadWholeStable's report of a file that read differently
// every time.
var ErrUnstable = errors.New("file reads differently every time")

// ReadWholeStable reads a small file that carries no checksum of its own
// (see OpenSized) and returns its bytes once stableReadsAlike reads in a
// row agree: that tells a read corrupted between the media and memory from
// what the file holds. Two would not do: in a file of a few bytes a flip
// in flight hits the same bit again often enough (one flipped read in 64
// of an 8-byte offset index) that two flipped reads in a row come up, and
// were believed (log seed 418364). It reads at most attemptsMax+1 times,
// then gives up with an error wrapping ErrUnstable. A read the file ends
// before counts as one that differs: it may be a size read wrong.
func ReadWholeStable(fsys FS, name string, bytesMax int64, attemptsMax int) ([]byte, error) {
	f, size, err := OpenSized(fsys, name, bytesMax)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	// Two buffers take turns, instead of one per read: previous holds the
	// bytes later reads must agree with, spare takes the next read.
	var previous, spare []byte
	alike := 0
	for attempt := 0; attempt <= attemptsMax; attempt++ {
		b := spare
		if b == nil {
			b = make([]byte, size)
		}
		n, err := f.ReadAt(b, 0)
		if err != nil && !errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		switch {
		case int64(n) != size:
			previous, spare, alike = nil, b, 0
		case previous != nil && bytes.Equal(previous, b):
			spare = b
			alike++
		default:
			spare, previous, alike = previous, b, 1
		}
		if alike == stableReadsAlike {
			return previous, nil
		}
	}
	return nil, fmt.Errorf("%w: %s", ErrUnstable, name)
}

// stableReadsAlike is how many reads in a row must agree before
// ReadWholeStable believes them.
const stableReadsAlike = 3
