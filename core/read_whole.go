package core

import (
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
