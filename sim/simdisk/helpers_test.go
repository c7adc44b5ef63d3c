package simdisk

import (
	"errors"
	"io/fs"

	"sluice/core"
	"sluice/sim/kernel"
)

// testingT is what the helpers need of *testing.T and *rapid.T alike.
type testingT interface {
	Helper()
	Fatalf(format string, args ...any)
}

// createFile opens name, creating it, and fails the test on error.
func createFile(t testingT, d *Disk, name string) core.File {
	t.Helper()
	f, err := d.OpenFile(name, true)
	if err != nil {
		t.Fatalf("OpenFile(%q, create) = %v", name, err)
	}
	return f
}

// write writes all of s at offset.
func write(t testingT, f core.File, offset int64, s string) {
	t.Helper()
	if n, err := f.WriteAt([]byte(s), offset); err != nil || n != len(s) {
		t.Fatalf("WriteAt(%q, %d) = %d, %v", s, offset, n, err)
	}
}

// syncFile syncs f, runs the kernel until it completes, and returns its
// error; it fails the test unless done ran exactly once.
func syncFile(t testingT, k *kernel.Kernel, f core.File) error {
	t.Helper()
	var results []error
	f.Sync(func(err error) { results = append(results, err) })
	run(k)
	if len(results) != 1 {
		t.Fatalf("Sync called back %d times; want once", len(results))
	}
	return results[0]
}

// syncDirectory is syncFile for SyncDir.
func syncDirectory(t testingT, k *kernel.Kernel, d *Disk, dir string) error {
	t.Helper()
	var results []error
	d.SyncDir(dir, func(err error) { results = append(results, err) })
	run(k)
	if len(results) != 1 {
		t.Fatalf("SyncDir(%q) called back %d times; want once", dir, len(results))
	}
	return results[0]
}

// mustSync and mustSyncDirectory require the sync to succeed.
func mustSync(t testingT, k *kernel.Kernel, f core.File) {
	t.Helper()
	if err := syncFile(t, k, f); err != nil {
		t.Fatalf("Sync = %v", err)
	}
}

func mustSyncDirectory(t testingT, k *kernel.Kernel, d *Disk, dir string) {
	t.Helper()
	if err := syncDirectory(t, k, d, dir); err != nil {
		t.Fatalf("SyncDir(%q) = %v", dir, err)
	}
}

// readFile returns name's current contents, or false if it does not exist.
func readFile(t testingT, d *Disk, name string) (string, bool) {
	t.Helper()
	f, err := d.OpenFile(name, false)
	if errors.Is(err, fs.ErrNotExist) {
		return "", false
	}
	if err != nil {
		t.Fatalf("OpenFile(%q) = %v", name, err)
	}
	defer f.Close()
	size, err := f.Size()
	if err != nil {
		t.Fatalf("Size = %v", err)
	}
	p := make([]byte, size)
	if n, err := f.ReadAt(p, 0); n != len(p) {
		t.Fatalf("ReadAt = %d, %v; want %d bytes", n, err, len(p))
	}
	return string(p), true
}

// expectFile requires name to hold exactly want.
func expectFile(t testingT, d *Disk, name, want string) {
	t.Helper()
	got, ok := readFile(t, d, name)
	if !ok {
		t.Fatalf("%s is missing; want %q", name, want)
	}
	if got != want {
		t.Fatalf("%s = %q; want %q", name, got, want)
	}
}

// expectMissing requires name not to exist.
func expectMissing(t testingT, d *Disk, name string) {
	t.Helper()
	if got, ok := readFile(t, d, name); ok {
		t.Fatalf("%s exists with %q; want it gone", name, got)
	}
}

// crash crashes the process and the disk, as Machine.Crash does, and
// restarts the process.
func crash(d *Disk, process *kernel.Process) {
	process.Crash()
	d.Crash()
	process.Restart()
}
