package fstest

import (
	"errors"
	"io"
	"io/fs"
	"testing"
)

func checkOpenMissingFile(t *testing.T, h Harness) {
	_, err := h.FS.OpenFile("missing", false)
	expectNotExist(t, `OpenFile("missing", create=false)`, err)
	_, err = h.FS.OpenFile("no-such-directory/file", true)
	expectNotExist(t, `OpenFile("no-such-directory/file", create=true)`, err)
	expectNames(t, h.FS, ".")
}

func checkCreateThenReopen(t *testing.T, h Harness) {
	f := create(t, h.FS, "log")
	if size, err := f.Size(); err != nil || size != 0 {
		t.Fatalf("new file Size = %d, %v; want 0, nil", size, err)
	}
	writeAt(t, f, []byte("hello"), 0)
	closeFile(t, f)
	expectFile(t, h.FS, "log", "hello")
	expectNames(t, h.FS, ".", "log")
}

func checkCreateKeepsExistingContent(t *testing.T, h Harness) {
	writeFile(t, h.FS, "log", "kept")
	f := create(t, h.FS, "log")
	defer closeFile(t, f)
	expectContents(t, f, []byte("kept"))
}

func checkOpenDirectoryAsFile(t *testing.T, h Harness) {
	if err := h.FS.MkdirAll("directory"); err != nil {
		t.Fatalf("MkdirAll = %v", err)
	}
	for _, create := range []bool{false, true} {
		f, err := h.FS.OpenFile("directory", create)
		if err == nil {
			f.Close()
			t.Fatalf("OpenFile(directory, create=%v) succeeded; want an error", create)
		}
	}
}

func checkWriteAtExtendsOverwritesAndLeavesHoles(t *testing.T, h Harness) {
	f := create(t, h.FS, "log")
	defer closeFile(t, f)
	writeAt(t, f, []byte("hello"), 0)
	writeAt(t, f, []byte("world"), 10) // leaves a hole at 5..10
	expectContents(t, f, []byte("hello\x00\x00\x00\x00\x00world"))
	writeAt(t, f, []byte("LL"), 2)  // overwrites in place
	writeAt(t, f, []byte("!!"), 14) // overwrites the last byte and extends by one
	expectContents(t, f, []byte("heLLo\x00\x00\x00\x00\x00worl!!"))
	if size, err := f.Size(); err != nil || size != 16 {
		t.Fatalf("Size = %d, %v; want 16, nil", size, err)
	}
	if n, err := f.WriteAt(nil, 100); n != 0 || err != nil {
		t.Fatalf("WriteAt(empty, 100) = %d, %v; want 0, nil", n, err)
	}
	if size, _ := f.Size(); size != 16 {
		t.Fatalf("an empty write changed Size to %d; want 16", size)
	}
}

func checkReadAtEndOfFile(t *testing.T, h Harness) {
	f := create(t, h.FS, "log")
	defer closeFile(t, f)
	writeAt(t, f, []byte("0123456789"), 0)

	p := make([]byte, 4)
	if n, err := f.ReadAt(p, 3); n != 4 || err != nil || string(p) != "3456" {
		t.Fatalf("ReadAt(4, 3) = %d, %v, %q; want 4, nil, \"3456\"", n, err, p)
	}
	// A read that reaches past the end is short, with io.EOF.
	p = make([]byte, 8)
	n, err := f.ReadAt(p, 6)
	if n != 4 || !errors.Is(err, io.EOF) || string(p[:n]) != "6789" {
		t.Fatalf("ReadAt(8, 6) = %d, %v, %q; want 4, io.EOF, \"6789\"", n, err, p[:n])
	}
	// At and beyond the end nothing is read.
	for _, offset := range []int64{10, 11, 1000} {
		if n, err := f.ReadAt(p, offset); n != 0 || !errors.Is(err, io.EOF) {
			t.Fatalf("ReadAt(8, %d) = %d, %v; want 0, io.EOF", offset, n, err)
		}
	}
	// A read that ends exactly at the end may report io.EOF or nil
	// (io.ReaderAt allows both), but must read everything.
	p = make([]byte, 2)
	if n, err := f.ReadAt(p, 8); n != 2 || (err != nil && !errors.Is(err, io.EOF)) || string(p) != "89" {
		t.Fatalf("ReadAt(2, 8) = %d, %v, %q; want 2, nil or io.EOF, \"89\"", n, err, p)
	}
}

func checkNegativeOffsets(t *testing.T, h Harness) {
	f := create(t, h.FS, "log")
	defer closeFile(t, f)
	writeAt(t, f, []byte("data"), 0)
	if _, err := f.ReadAt(make([]byte, 1), -1); err == nil {
		t.Fatal("ReadAt at -1 succeeded; want an error")
	}
	if _, err := f.WriteAt([]byte("x"), -1); err == nil {
		t.Fatal("WriteAt at -1 succeeded; want an error")
	}
	if err := f.Truncate(-1); err == nil {
		t.Fatal("Truncate(-1) succeeded; want an error")
	}
	expectContents(t, f, []byte("data"))
}

func checkTruncateShrinksAndExtends(t *testing.T, h Harness) {
	f := create(t, h.FS, "log")
	defer closeFile(t, f)
	writeAt(t, f, []byte("0123456789"), 0)
	if err := f.Truncate(4); err != nil {
		t.Fatalf("Truncate(4) = %v", err)
	}
	expectContents(t, f, []byte("0123"))
	// Extending after a shrink shows zeros, never the bytes cut off.
	if err := f.Truncate(8); err != nil {
		t.Fatalf("Truncate(8) = %v", err)
	}
	expectContents(t, f, []byte("0123\x00\x00\x00\x00"))
	if err := f.Truncate(0); err != nil {
		t.Fatalf("Truncate(0) = %v", err)
	}
	if size, err := f.Size(); err != nil || size != 0 {
		t.Fatalf("Size after Truncate(0) = %d, %v; want 0, nil", size, err)
	}
	writeAt(t, f, []byte("ab"), 3)
	expectContents(t, f, []byte("\x00\x00\x00ab"))
}

func checkHandlesShareOneFile(t *testing.T, h Harness) {
	writer := create(t, h.FS, "log")
	defer closeFile(t, writer)
	reader := open(t, h.FS, "log")
	defer closeFile(t, reader)
	writeAt(t, writer, []byte("shared"), 0)
	expectContents(t, reader, []byte("shared"))
	if err := reader.Truncate(3); err != nil {
		t.Fatalf("Truncate = %v", err)
	}
	expectContents(t, writer, []byte("sha"))
}

func checkClosedFileErrors(t *testing.T, h Harness) {
	f := create(t, h.FS, "log")
	writeAt(t, f, []byte("data"), 0)
	closeFile(t, f)
	if _, err := f.ReadAt(make([]byte, 1), 0); err == nil {
		t.Fatal("ReadAt on a closed file succeeded")
	}
	if _, err := f.WriteAt([]byte("x"), 0); err == nil {
		t.Fatal("WriteAt on a closed file succeeded")
	}
	if err := f.Truncate(0); err == nil {
		t.Fatal("Truncate on a closed file succeeded")
	}
	if _, err := f.Size(); err == nil {
		t.Fatal("Size on a closed file succeeded")
	}
	if err := f.Close(); !errors.Is(err, fs.ErrClosed) {
		t.Fatalf("second Close = %v; want an error matching fs.ErrClosed", err)
	}
	var sync callbackRecorder
	f.Sync(sync.done)
	sync.expectNotYet(t, "Sync on a closed file")
	h.Drain()
	if err := sync.expectOnce(t, "Sync on a closed file"); err == nil {
		t.Fatal("Sync on a closed file reported success")
	}
	expectFile(t, h.FS, "log", "data")
}
