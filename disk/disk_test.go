package disk

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"testing"

	"sluice/core"
	"sluice/core/fstest"
)

// testInboxLength is the loop inbox of a test disk: larger than the sync
// queue, as New asks of a real loop.
const testInboxLength = 4 * syncQueueLength

// loop stands in for a node's event loop: post sends to inbox, drain runs
// what arrived until every promised completion has run.
type loop struct {
	inbox chan func()
	disk  *FS
	ran   uint64
}

func newLoop(t *testing.T) *loop {
	t.Helper()
	l := &loop{inbox: make(chan func(), testInboxLength)}
	d, err := New(t.TempDir(), func(f func()) { l.inbox <- f })
	if err != nil {
		t.Fatalf("New = %v", err)
	}
	t.Cleanup(func() {
		if err := d.Close(); err != nil {
			t.Errorf("Close = %v", err)
		}
	})
	l.disk = d
	return l
}

// drain runs posted completions until each Sync and SyncDir made so far has
// had its one completion.
func (l *loop) drain() {
	for l.ran < l.disk.completionsPromised {
		(<-l.inbox)()
		l.ran++
	}
}

func TestConformance(t *testing.T) {
	fstest.Run(t, func(t *testing.T) fstest.Harness {
		l := newLoop(t)
		return fstest.Harness{FS: l.disk, Drain: l.drain}
	})
}

func TestNamesStayUnderRoot(t *testing.T) {
	l := newLoop(t)
	outside := filepath.Join(filepath.Dir(l.disk.Root()), "outside")
	for _, name := range []string{"../outside", "/" + outside} {
		if _, err := l.disk.OpenFile(name, true); !errors.Is(err, fs.ErrInvalid) {
			t.Fatalf("OpenFile(%q) = %v; want fs.ErrInvalid", name, err)
		}
	}
	if _, err := os.Stat(outside); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("a file appeared outside the root: %v", err)
	}
}

func TestFilesLandUnderRoot(t *testing.T) {
	l := newLoop(t)
	if err := l.disk.MkdirAll("topic-0"); err != nil {
		t.Fatal(err)
	}
	f, err := l.disk.OpenFile("topic-0/log", true)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt([]byte("bytes"), 0); err != nil {
		t.Fatal(err)
	}
	f.Close()
	got, err := os.ReadFile(filepath.Join(l.disk.Root(), "topic-0", "log"))
	if err != nil || string(got) != "bytes" {
		t.Fatalf("file on the OS = %q, %v; want \"bytes\"", got, err)
	}
}

func TestOutOfSpaceWrapsErrDiskFull(t *testing.T) {
	for _, errno := range []syscall.Errno{syscall.ENOSPC, syscall.EDQUOT} {
		err := mapError(&fs.PathError{Op: "write", Path: "log", Err: errno})
		if !errors.Is(err, core.ErrDiskFull) || !errors.Is(err, errno) {
			t.Fatalf("mapError(%v) = %v; want it to wrap core.ErrDiskFull and the errno", errno, err)
		}
	}
	if err := mapError(syscall.EIO); errors.Is(err, core.ErrDiskFull) {
		t.Fatalf("mapError(EIO) = %v; must not claim the disk is full", err)
	}
}

// TestSyncCompletionsKeepIssueOrder issues many syncs on several files at
// once and requires each file's completions to arrive in issue order.
func TestSyncCompletionsKeepIssueOrder(t *testing.T) {
	const fileCount, syncsPerFile = 8, 50
	l := newLoop(t)
	completed := make([][]int, fileCount)
	for i := range fileCount {
		f, err := l.disk.OpenFile(fmt.Sprintf("file-%d", i), true)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		for j := range syncsPerFile {
			if _, err := f.WriteAt([]byte{byte(j)}, int64(j)); err != nil {
				t.Fatal(err)
			}
			f.Sync(func(err error) {
				if err != nil {
					t.Errorf("sync %d of file %d = %v", j, i, err)
				}
				completed[i] = append(completed[i], j)
			})
		}
	}
	l.drain()
	want := make([]int, syncsPerFile)
	for j := range want {
		want[j] = j
	}
	for i := range fileCount {
		if !slices.Equal(completed[i], want) {
			t.Fatalf("file %d completions = %v; want %v", i, completed[i], want)
		}
	}
}

// TestCloseWhileSyncing closes files with syncs still queued: each sync
// must still succeed (the descriptor outlives Close), under -race too.
func TestCloseWhileSyncing(t *testing.T) {
	const fileCount, syncsPerFile = 16, 8
	l := newLoop(t)
	results := map[string][]error{}
	for i := range fileCount {
		name := fmt.Sprintf("file-%d", i)
		f, err := l.disk.OpenFile(name, true)
		if err != nil {
			t.Fatal(err)
		}
		for j := range syncsPerFile {
			if _, err := f.WriteAt([]byte("data"), int64(4*j)); err != nil {
				t.Fatal(err)
			}
			f.Sync(func(err error) { results[name] = append(results[name], err) })
		}
		if err := f.Close(); err != nil {
			t.Fatalf("Close with syncs in flight = %v", err)
		}
	}
	l.drain()
	if len(results) != fileCount {
		t.Fatalf("completions for %d files; want %d", len(results), fileCount)
	}
	for name, errs := range results {
		if len(errs) != syncsPerFile {
			t.Fatalf("%s: %d completions; want %d", name, len(errs), syncsPerFile)
		}
		for _, err := range errs {
			if err != nil {
				t.Fatalf("%s: sync after Close = %v; syncs already begun must complete", name, err)
			}
		}
	}
}

func TestSyncAfterDiskClose(t *testing.T) {
	inbox := make(chan func(), testInboxLength)
	d, err := New(t.TempDir(), func(f func()) { inbox <- f })
	if err != nil {
		t.Fatal(err)
	}
	f, err := d.OpenFile("log", true)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	if err := d.Close(); !errors.Is(err, fs.ErrClosed) {
		t.Fatalf("second Close = %v; want fs.ErrClosed", err)
	}
	var got []error
	f.Sync(func(err error) { got = append(got, err) })
	d.SyncDir(".", func(err error) { got = append(got, err) })
	if len(got) != 0 {
		t.Fatal("a completion ran inside the call")
	}
	for len(inbox) > 0 {
		(<-inbox)()
	}
	if len(got) != 2 || !errors.Is(got[0], fs.ErrClosed) || !errors.Is(got[1], fs.ErrClosed) {
		t.Fatalf("syncs after Close = %v; want two fs.ErrClosed errors", got)
	}
}

func TestNewNeedsPost(t *testing.T) {
	if _, err := New(t.TempDir(), nil); err == nil {
		t.Fatal("New with a nil post succeeded")
	}
}
