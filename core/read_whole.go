package core

import (
	"errors"
	"fmt"
	"io"
)

// ReadWhole reads a small file whole: opened, sized, refused if bigger
// than bytesMax (so a corrupt size never becomes a huge allocation), read
// into one buffer of exactly its size. A missing file's error satisfies
// errors.Is(err, fs.ErrNotExist).
func ReadWhole(fsys FS, name string, bytesMax int64) ([]byte, error) {
	f, err := fsys.OpenFile(name, false)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	size, err := f.Size()
	if err != nil {
		return nil, err
	}
	if size > bytesMax {
		return nil, fmt.Errorf("%s is %d bytes, more than %d", name, size, bytesMax)
	}
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
