package fstest

import (
	"bytes"
	"errors"
	"io/fs"
	"slices"
	"testing"

	"sluice/core"
)

// create opens name, creating it if missing, and fails the test on error.
func create(t *testing.T, fsys core.FS, name string) core.File {
	t.Helper()
	f, err := fsys.OpenFile(name, true)
	if err != nil {
		t.Fatalf("OpenFile(%q, create) = %v", name, err)
	}
	return f
}

// open opens an existing name and fails the test on error.
func open(t *testing.T, fsys core.FS, name string) core.File {
	t.Helper()
	f, err := fsys.OpenFile(name, false)
	if err != nil {
		t.Fatalf("OpenFile(%q) = %v", name, err)
	}
	return f
}

// closeFile closes f and fails the test on error.
func closeFile(t *testing.T, f core.File) {
	t.Helper()
	if err := f.Close(); err != nil {
		t.Fatalf("Close = %v", err)
	}
}

// writeAt writes p at offset and requires the whole of it to be written.
func writeAt(t *testing.T, f core.File, p []byte, offset int64) {
	t.Helper()
	n, err := f.WriteAt(p, offset)
	if err != nil || n != len(p) {
		t.Fatalf("WriteAt(%d bytes, %d) = %d, %v; want %d, nil", len(p), offset, n, err, len(p))
	}
}

// writeFile creates name with content and closes it.
func writeFile(t *testing.T, fsys core.FS, name string, content string) {
	t.Helper()
	f := create(t, fsys, name)
	writeAt(t, f, []byte(content), 0)
	closeFile(t, f)
}

// contents reads the whole of f through Size and ReadAt.
func contents(t *testing.T, f core.File) []byte {
	t.Helper()
	size, err := f.Size()
	if err != nil {
		t.Fatalf("Size = %v", err)
	}
	p := make([]byte, size)
	n, err := f.ReadAt(p, 0)
	if n != len(p) {
		t.Fatalf("ReadAt(%d bytes, 0) = %d, %v; want all of it", len(p), n, err)
	}
	return p
}

// expectContents requires f to hold exactly want.
func expectContents(t *testing.T, f core.File, want []byte) {
	t.Helper()
	if got := contents(t, f); !bytes.Equal(got, want) {
		t.Fatalf("contents = %q; want %q", got, want)
	}
}

// expectFile requires name to exist with exactly want.
func expectFile(t *testing.T, fsys core.FS, name string, want string) {
	t.Helper()
	f := open(t, fsys, name)
	defer closeFile(t, f)
	expectContents(t, f, []byte(want))
}

// expectMissing requires name not to exist.
func expectMissing(t *testing.T, fsys core.FS, name string) {
	t.Helper()
	f, err := fsys.OpenFile(name, false)
	if err == nil {
		f.Close()
		t.Fatalf("OpenFile(%q) succeeded; want it missing", name)
	}
	if !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("OpenFile(%q) = %v; want an error matching fs.ErrNotExist", name, err)
	}
}

// expectNames requires dir to list exactly want, in that order.
func expectNames(t *testing.T, fsys core.FS, dir string, want ...string) {
	t.Helper()
	got, err := fsys.ReadDir(dir)
	if err != nil {
		t.Fatalf("ReadDir(%q) = %v", dir, err)
	}
	if len(want) == 0 {
		want = nil
	}
	if len(got) == 0 {
		got = nil
	}
	if !slices.Equal(got, want) {
		t.Fatalf("ReadDir(%q) = %q; want %q", dir, got, want)
	}
}

// expectNotExist requires err to match fs.ErrNotExist.
func expectNotExist(t *testing.T, what string, err error) {
	t.Helper()
	if !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("%s = %v; want an error matching fs.ErrNotExist", what, err)
	}
}

// expectError requires err to be non-nil.
func expectError(t *testing.T, what string, err error) {
	t.Helper()
	if err == nil {
		t.Fatalf("%s succeeded; want an error", what)
	}
}

// callbackRecorder counts the calls of a done callback and keeps their
// errors, so a check can tell "not yet", "once" and "twice" apart.
type callbackRecorder struct {
	errors []error
}

func (r *callbackRecorder) done(err error) { r.errors = append(r.errors, err) }

// expectNotYet requires the callback not to have run: callbacks never run
// inside the call that registered them.
func (r *callbackRecorder) expectNotYet(t *testing.T, what string) {
	t.Helper()
	if len(r.errors) != 0 {
		t.Fatalf("%s called its callback inside the call; it must run later, on the loop", what)
	}
}

// expectOnce requires exactly one call and returns its error.
func (r *callbackRecorder) expectOnce(t *testing.T, what string) error {
	t.Helper()
	if len(r.errors) != 1 {
		t.Fatalf("%s called its callback %d times after Drain; want exactly once", what, len(r.errors))
	}
	return r.errors[0]
}
