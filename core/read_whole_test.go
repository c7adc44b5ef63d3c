package core_test

import (
	"bytes"
	"errors"
	"io/fs"
	"slices"
	"strings"
	"testing"

	"sluice/core"
	"sluice/sim/kernel"
	"sluice/sim/simdisk"
)

func TestReadWhole(t *testing.T) {
	k := kernel.NewKernel(1, nil)
	disk := simdisk.New(k, kernel.NewProcess("node"), kernel.NewRand(1, "disk"), simdisk.Faults{})
	f, err := disk.OpenFile("small", true)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt([]byte("node.id=3\n"), 0); err != nil {
		t.Fatal(err)
	}
	f.Close()

	data, err := core.ReadWhole(disk, "small", 64)
	if err != nil || string(data) != "node.id=3\n" {
		t.Fatalf("ReadWhole = %q, %v; want the file's 10 bytes", data, err)
	}
	if _, err := core.ReadWhole(disk, "small", 9); !errors.Is(err, core.ErrTooBig) || !strings.Contains(err.Error(), "more than 9") {
		t.Fatalf("a file over the bound: err %v, want a refusal naming the bound", err)
	}
	if _, err := core.ReadWhole(disk, "missing", 64); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("a missing file: err %v, want fs.ErrNotExist", err)
	}
}

// flippingFS flips, on each ReadAt of any file, the bit the next entry of
// flips names (-1: none), then reads cleanly once flips runs out; it
// counts the reads.
type flippingFS struct {
	core.FS
	flips []int
	reads int
}

func (f *flippingFS) OpenFile(name string, create bool) (core.File, error) {
	file, err := f.FS.OpenFile(name, create)
	if err != nil {
		return nil, err
	}
	return flippingFile{File: file, fs: f}, nil
}

type flippingFile struct {
	core.File
	fs *flippingFS
}

func (f flippingFile) ReadAt(p []byte, offset int64) (int, error) {
	n, err := f.File.ReadAt(p, offset)
	f.fs.reads++
	if len(f.fs.flips) > 0 {
		if bit := f.fs.flips[0]; bit >= 0 && bit/8 < n {
			p[bit/8] ^= 1 << (bit % 8)
		}
		f.fs.flips = f.fs.flips[1:]
	}
	return n, err
}

// Three reads in a row must agree: in a file of a few bytes a flip in
// flight hits the same bit again often enough that two flipped reads in a
// row happen (log seed 418364: the second and third reads of an 8-byte
// offset index flipped the same bit).
func TestReadWholeStableWantsThreeReadsAlike(t *testing.T) {
	k := kernel.NewKernel(1, nil)
	disk := simdisk.New(k, kernel.NewProcess("node"), kernel.NewRand(1, "disk"), simdisk.Faults{})
	f, err := disk.OpenFile("index", true)
	if err != nil {
		t.Fatal(err)
	}
	want := []byte{0, 0, 0, 9, 0, 0, 2, 226}
	if _, err := f.WriteAt(want, 0); err != nil {
		t.Fatal(err)
	}
	f.Close()
	const bit = 27 // relative offset 9 read as 1
	for _, c := range []struct {
		name  string
		flips []int
		reads int // how many ReadAt calls it takes
	}{
		{"clean reads", nil, 3},
		{"one flip, then clean", []int{bit}, 4},
		{"the seed: clean, then the same flip twice", []int{-1, bit, bit}, 6},
		{"the same flip twice first", []int{bit, bit}, 5},
		{"a flip between clean reads", []int{-1, -1, bit}, 6},
	} {
		fsys := &flippingFS{FS: disk, flips: slices.Clone(c.flips)}
		got, err := core.ReadWholeStable(fsys, "index", 64, 8)
		if err != nil || !bytes.Equal(got, want) {
			t.Fatalf("%s: ReadWholeStable = %v, %v; want %v", c.name, got, err, want)
		}
		if fsys.reads != c.reads {
			t.Fatalf("%s: %d reads, want %d", c.name, fsys.reads, c.reads)
		}
	}
	// A file that never reads alike often enough is unstable, not wrong.
	fsys := &flippingFS{FS: disk, flips: []int{-1, -1, bit, -1, -1, bit, -1, -1, bit}}
	if got, err := core.ReadWholeStable(fsys, "index", 64, 8); !errors.Is(err, core.ErrUnstable) {
		t.Fatalf("alternating reads: ReadWholeStable = %v, %v; want ErrUnstable", got, err)
	}
}
