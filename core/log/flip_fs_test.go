package log_test

import "sluice/core"

// flipFS flips one bit of one file in flight, between the media and
// memory, on the reads that cover it once armed: the first flips of them
// after the first skip, or every one when flips is negative (a failing
// cable or controller that repeats the same flip). The file itself stays right, so a read after the
// last flip is clean.
type flipFS struct {
	core.FS
	name    string
	at      int64 // the byte holding the bit
	bit     uint
	armed   bool
	skip    int
	flips   int
	flipped int // reads flipped so far
}

func (f *flipFS) OpenFile(name string, create bool) (core.File, error) {
	file, err := f.FS.OpenFile(name, create)
	if err != nil || name != f.name {
		return file, err
	}
	return flipFile{File: file, fs: f}, nil
}

type flipFile struct {
	core.File
	fs *flipFS
}

func (f flipFile) ReadAt(p []byte, offset int64) (int, error) {
	n, err := f.File.ReadAt(p, offset)
	fs := f.fs
	if at := fs.at - offset; fs.armed && fs.flips != 0 && at >= 0 && at < int64(n) {
		if fs.skip > 0 {
			fs.skip--
			return n, err
		}
		p[at] ^= 1 << fs.bit
		fs.flipped++
		if fs.flips > 0 {
			fs.flips--
		}
	}
	return n, err
}
