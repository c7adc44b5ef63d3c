package fstest

import (
	"strings"
	"testing"
)

func checkReadDirSorted(t *testing.T, h Harness) {
	for _, name := range []string{"b", "a.log", "C", "a"} {
		writeFile(t, h.FS, name, name)
	}
	for _, dir := range []string{"d", "a.index"} {
		if err := h.FS.MkdirAll(dir); err != nil {
			t.Fatalf("MkdirAll(%q) = %v", dir, err)
		}
	}
	// Sorted by bytes, as sort.Strings does; directories mixed in.
	expectNames(t, h.FS, ".", "C", "a", "a.index", "a.log", "b", "d")
	expectNames(t, h.FS, "d")
}

func checkReadDirErrors(t *testing.T, h Harness) {
	_, err := h.FS.ReadDir("missing")
	expectNotExist(t, `ReadDir("missing")`, err)
	writeFile(t, h.FS, "file", "x")
	_, err = h.FS.ReadDir("file")
	expectError(t, `ReadDir("file")`, err)
}

func checkMkdirAllNested(t *testing.T, h Harness) {
	if err := h.FS.MkdirAll("a/b/c"); err != nil {
		t.Fatalf("MkdirAll(a/b/c) = %v", err)
	}
	if err := h.FS.MkdirAll("a/b/c"); err != nil {
		t.Fatalf("MkdirAll(a/b/c) again = %v; want nil, it already exists", err)
	}
	if err := h.FS.MkdirAll("a/b2"); err != nil {
		t.Fatalf("MkdirAll(a/b2) = %v", err)
	}
	if err := h.FS.MkdirAll("."); err != nil {
		t.Fatalf("MkdirAll(.) = %v; want nil, the root exists", err)
	}
	expectNames(t, h.FS, ".", "a")
	expectNames(t, h.FS, "a", "b", "b2")
	expectNames(t, h.FS, "a/b", "c")
	expectNames(t, h.FS, "a/b/c")
}

func checkMkdirAllThroughFile(t *testing.T, h Harness) {
	writeFile(t, h.FS, "file", "x")
	expectError(t, `MkdirAll("file")`, h.FS.MkdirAll("file"))
	expectError(t, `MkdirAll("file/sub")`, h.FS.MkdirAll("file/sub"))
	expectFile(t, h.FS, "file", "x")
}

func checkRemoveFileAndEmptyDirectory(t *testing.T, h Harness) {
	writeFile(t, h.FS, "file", "x")
	if err := h.FS.MkdirAll("empty"); err != nil {
		t.Fatalf("MkdirAll = %v", err)
	}
	if err := h.FS.Remove("file"); err != nil {
		t.Fatalf("Remove(file) = %v", err)
	}
	expectMissing(t, h.FS, "file")
	if err := h.FS.Remove("empty"); err != nil {
		t.Fatalf("Remove(empty) = %v", err)
	}
	expectNames(t, h.FS, ".")
}

func checkRemoveNonEmptyDirectory(t *testing.T, h Harness) {
	if err := h.FS.MkdirAll("full"); err != nil {
		t.Fatalf("MkdirAll = %v", err)
	}
	writeFile(t, h.FS, "full/file", "x")
	expectError(t, `Remove("full")`, h.FS.Remove("full"))
	expectNames(t, h.FS, "full", "file")
	expectFile(t, h.FS, "full/file", "x")
}

func checkRemoveMissing(t *testing.T, h Harness) {
	expectNotExist(t, `Remove("missing")`, h.FS.Remove("missing"))
	expectNotExist(t, `Remove("missing/file")`, h.FS.Remove("missing/file"))
}

func checkRemovedOpenFileStillWorks(t *testing.T, h Harness) {
	f := create(t, h.FS, "file")
	defer closeFile(t, f)
	writeAt(t, f, []byte("before"), 0)
	if err := h.FS.Remove("file"); err != nil {
		t.Fatalf("Remove = %v", err)
	}
	expectMissing(t, h.FS, "file")
	// As on POSIX, an open handle keeps the unlinked file alive.
	writeAt(t, f, []byte("after"), 6)
	expectContents(t, f, []byte("beforeafter"))
	// A new file under the old name is a different file.
	writeFile(t, h.FS, "file", "new")
	expectContents(t, f, []byte("beforeafter"))
}

func checkRenameReplacesTarget(t *testing.T, h Harness) {
	writeFile(t, h.FS, "from", "new")
	writeFile(t, h.FS, "to", "old contents")
	if err := h.FS.Rename("from", "to"); err != nil {
		t.Fatalf("Rename = %v", err)
	}
	expectMissing(t, h.FS, "from")
	expectFile(t, h.FS, "to", "new")
	expectNames(t, h.FS, ".", "to")
}

func checkRenameAcrossDirectories(t *testing.T, h Harness) {
	for _, dir := range []string{"a", "b"} {
		if err := h.FS.MkdirAll(dir); err != nil {
			t.Fatalf("MkdirAll(%q) = %v", dir, err)
		}
	}
	writeFile(t, h.FS, "a/file", "moved")
	if err := h.FS.Rename("a/file", "b/renamed"); err != nil {
		t.Fatalf("Rename = %v", err)
	}
	expectNames(t, h.FS, "a")
	expectNames(t, h.FS, "b", "renamed")
	expectFile(t, h.FS, "b/renamed", "moved")
}

func checkRenameDirectory(t *testing.T, h Harness) {
	if err := h.FS.MkdirAll("topic-0/inner"); err != nil {
		t.Fatalf("MkdirAll = %v", err)
	}
	writeFile(t, h.FS, "topic-0/inner/log", "content")
	if err := h.FS.Rename("topic-0", "topic-0.delete"); err != nil {
		t.Fatalf("Rename of a directory = %v", err)
	}
	expectNames(t, h.FS, ".", "topic-0.delete")
	expectFile(t, h.FS, "topic-0.delete/inner/log", "content")
	expectError(t, "Rename of a directory into itself", h.FS.Rename("topic-0.delete", "topic-0.delete/inner/x"))
	expectNames(t, h.FS, ".", "topic-0.delete")
}

func checkRenameMissing(t *testing.T, h Harness) {
	expectNotExist(t, `Rename("missing", "to")`, h.FS.Rename("missing", "to"))
	writeFile(t, h.FS, "from", "x")
	expectNotExist(t, `Rename("from", "missing/to")`, h.FS.Rename("from", "missing/to"))
	expectFile(t, h.FS, "from", "x")
}

func checkNamesInSubdirectories(t *testing.T, h Harness) {
	if err := h.FS.MkdirAll("topic-0"); err != nil {
		t.Fatalf("MkdirAll = %v", err)
	}
	writeFile(t, h.FS, "topic-0/00000000000000000000.log", "segment")
	writeFile(t, h.FS, "topic-0/00000000000000000000.index", "index")
	expectNames(t, h.FS, "topic-0", "00000000000000000000.index", "00000000000000000000.log")
	expectFile(t, h.FS, "topic-0/00000000000000000000.log", "segment")
	expectNames(t, h.FS, ".", "topic-0")
}

// invalidNames escape the root, are not io/fs slash paths, or have an
// element longer than a file name may be on Linux (NAME_MAX, 255 bytes).
var invalidNames = []string{"", "/absolute", "../escape", "a/../../escape", "a/..", "./a", "a//b", "a/",
	strings.Repeat("n", 256), "a/" + strings.Repeat("n", 256)}

func checkInvalidNames(t *testing.T, h Harness) {
	writeFile(t, h.FS, "a", "x")
	for _, name := range invalidNames {
		f, err := h.FS.OpenFile(name, true)
		if err == nil {
			f.Close()
			t.Fatalf("OpenFile(%q, create) succeeded; want an error", name)
		}
		expectError(t, "MkdirAll("+name+")", h.FS.MkdirAll(name))
		expectError(t, "Remove("+name+")", h.FS.Remove(name))
		expectError(t, "Rename(a, "+name+")", h.FS.Rename("a", name))
		expectError(t, "Rename("+name+", b)", h.FS.Rename(name, "b"))
		if _, err := h.FS.ReadDir(name); err == nil {
			t.Fatalf("ReadDir(%q) succeeded; want an error", name)
		}
		var r callbackRecorder
		h.FS.SyncDir(name, r.done)
		r.expectNotYet(t, "SyncDir("+name+")")
		h.Drain()
		expectError(t, "SyncDir("+name+")", r.expectOnce(t, "SyncDir("+name+")"))
	}
	expectError(t, `Remove(".")`, h.FS.Remove("."))
	expectError(t, `Rename(".", "b")`, h.FS.Rename(".", "b"))
	expectNames(t, h.FS, ".", "a")
	expectFile(t, h.FS, "a", "x")
}
