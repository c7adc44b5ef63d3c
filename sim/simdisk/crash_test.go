package simdisk

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"testing"
	"time"

	"sluice/sim/kernel"
)

func TestUnsyncedWritesAreLost(t *testing.T) {
	d, k, process := newTestDisk(1, Faults{SyncLatencyMax: time.Millisecond})
	f := createFile(t, d, "log")
	mustSyncDirectory(t, k, d, ".")
	write(t, f, 0, "durable")
	mustSync(t, k, f)
	write(t, f, 7, "-lost")
	if err := f.Truncate(3); err != nil {
		t.Fatal(err)
	}
	expectFile(t, d, "log", "dur")
	crash(d, process)
	expectFile(t, d, "log", "durable")
}

func TestSyncInFlightAtCrashIsLostAndNeverCompletes(t *testing.T) {
	d, k, process := newTestDisk(1, Faults{SyncLatencyMin: time.Second, SyncLatencyMax: time.Second})
	f := createFile(t, d, "log")
	mustSyncDirectory(t, k, d, ".")
	write(t, f, 0, "in flight")
	called := false
	f.Sync(func(error) { called = true })
	crash(d, process)
	run(k)
	if called {
		t.Fatal("a sync begun before the crash called back after it")
	}
	expectFile(t, d, "log", "")

	// Crashing the disk alone (no process crash) voids it too.
	g := createFile(t, d, "log")
	write(t, g, 0, "again")
	g.Sync(func(error) { called = true })
	d.Crash()
	run(k)
	if called {
		t.Fatal("a sync begun before Disk.Crash called back after it")
	}
}

func TestSyncedDataSurvivesEveryCrash(t *testing.T) {
	for seed := range uint64(200) {
		tornWrite := []float64{0, 0.5, 1}[seed%3]
		d, k, process := newTestDisk(seed, Faults{SyncLatencyMax: 5 * time.Millisecond, TornWrite: tornWrite})
		rng := kernel.NewRand(seed, "test")
		f := createFile(t, d, "log")
		mustSyncDirectory(t, k, d, ".")
		var current, acknowledged []byte
		for range 40 {
			switch rng.IntN(4) {
			case 0, 1: // append
				chunk := bytes.Repeat([]byte{byte('a' + rng.IntN(26))}, 1+rng.IntN(8))
				write(t, f, int64(len(current)), string(chunk))
				current = append(current, chunk...)
			case 2: // sync, acknowledged when it completes
				snapshot := slices.Clone(current)
				f.Sync(func(err error) {
					if err != nil {
						t.Fatalf("seed %d: Sync = %v", seed, err)
					}
					acknowledged = snapshot
				})
			case 3: // let time pass, then maybe crash
				k.RunUntil(k.Now() + int64(rng.IntN(int(3*time.Millisecond))))
				if rng.IntN(3) == 0 {
					crash(d, process)
					got, ok := readFile(t, d, "log")
					if !ok || !bytes.HasPrefix([]byte(got), acknowledged) {
						t.Fatalf("seed %d: after a crash log = %q (exists %v); want it to start with the synced %q", seed, got, ok, acknowledged)
					}
					if tornWrite == 0 && got != string(acknowledged) {
						t.Fatalf("seed %d: after a crash without tearing log = %q; want exactly the synced %q", seed, got, acknowledged)
					}
					current = []byte(got)
					acknowledged = slices.Clone(current)
					f = createFile(t, d, "log")
				}
			}
		}
	}
}

func TestCreatedFileVanishesWithoutDirectorySync(t *testing.T) {
	d, k, process := newTestDisk(1, Faults{TornWrite: 0})
	f := createFile(t, d, "log")
	write(t, f, 0, "synced data")
	mustSync(t, k, f)
	if data, ok := d.DurableFile("log"); ok {
		t.Fatalf("DurableFile(log) = %q before its directory was synced; want none", data)
	}
	crash(d, process)
	expectMissing(t, d, "log")

	f = createFile(t, d, "log")
	write(t, f, 0, "synced data")
	mustSync(t, k, f)
	mustSyncDirectory(t, k, d, ".")
	if data, ok := d.DurableFile("log"); !ok || string(data) != "synced data" {
		t.Fatalf("DurableFile(log) = %q, %v; want the synced data", data, ok)
	}
	crash(d, process)
	expectFile(t, d, "log", "synced data")
}

func TestSyncDirBeforeCreateDoesNotCoverIt(t *testing.T) {
	d, k, process := newTestDisk(1, Faults{SyncLatencyMin: time.Millisecond, SyncLatencyMax: time.Millisecond})
	var results []error
	d.SyncDir(".", func(err error) { results = append(results, err) })
	createFile(t, d, "log") // after the SyncDir began
	run(k)
	if len(results) != 1 || results[0] != nil {
		t.Fatalf("SyncDir = %v; want one success", results)
	}
	crash(d, process)
	expectMissing(t, d, "log")
}

func TestNestedDirectoriesNeedEveryLevelSynced(t *testing.T) {
	d, k, process := newTestDisk(1, Faults{})
	if err := d.MkdirAll("topic/0"); err != nil {
		t.Fatal(err)
	}
	f := createFile(t, d, "topic/0/log")
	write(t, f, 0, "x")
	mustSync(t, k, f)
	mustSyncDirectory(t, k, d, "topic/0")
	mustSyncDirectory(t, k, d, "topic")
	// The root never learned of "topic": everything below it is gone.
	crash(d, process)
	if names, _ := d.ReadDir("."); len(names) != 0 {
		t.Fatalf("root = %q after a crash; want empty", names)
	}

	if err := d.MkdirAll("topic/0"); err != nil {
		t.Fatal(err)
	}
	f = createFile(t, d, "topic/0/log")
	write(t, f, 0, "x")
	mustSync(t, k, f)
	for _, dir := range []string{"topic/0", "topic", "."} {
		mustSyncDirectory(t, k, d, dir)
	}
	crash(d, process)
	expectFile(t, d, "topic/0/log", "x")
}

func TestRenameDurableOnlyAfterSyncDirOfBothDirectories(t *testing.T) {
	d, k, process := newTestDisk(1, Faults{})
	for _, dir := range []string{"a", "b"} {
		if err := d.MkdirAll(dir); err != nil {
			t.Fatal(err)
		}
	}
	f := createFile(t, d, "a/x")
	write(t, f, 0, "payload")
	mustSync(t, k, f)
	for _, dir := range []string{"a", "b", "."} {
		mustSyncDirectory(t, k, d, dir)
	}

	// Not synced at all: the old name survives.
	if err := d.Rename("a/x", "b/y"); err != nil {
		t.Fatal(err)
	}
	crash(d, process)
	expectFile(t, d, "a/x", "payload")
	expectMissing(t, d, "b/y")

	// Only the target directory synced: still the old name, whole.
	if err := d.Rename("a/x", "b/y"); err != nil {
		t.Fatal(err)
	}
	mustSyncDirectory(t, k, d, "b")
	crash(d, process)
	expectFile(t, d, "a/x", "payload")
	expectMissing(t, d, "b/y")

	// Both synced: only the new name.
	if err := d.Rename("a/x", "b/y"); err != nil {
		t.Fatal(err)
	}
	mustSyncDirectory(t, k, d, "b")
	mustSyncDirectory(t, k, d, "a")
	crash(d, process)
	expectMissing(t, d, "a/x")
	expectFile(t, d, "b/y", "payload")
}

func TestRenameOverExistingIsAtomicAcrossCrash(t *testing.T) {
	// Kafka's segment swap: write "log.swap", sync it, rename it over
	// "log". A crash leaves one whole file or the other, never a mix.
	d, k, process := newTestDisk(1, Faults{})
	old := createFile(t, d, "log")
	write(t, old, 0, "old")
	mustSync(t, k, old)
	mustSyncDirectory(t, k, d, ".")

	swap := createFile(t, d, "log.swap")
	write(t, swap, 0, "new")
	mustSync(t, k, swap)
	if err := d.Rename("log.swap", "log"); err != nil {
		t.Fatal(err)
	}
	crash(d, process)
	expectFile(t, d, "log", "old")
	expectMissing(t, d, "log.swap")

	swap = createFile(t, d, "log.swap")
	write(t, swap, 0, "new")
	mustSync(t, k, swap)
	if err := d.Rename("log.swap", "log"); err != nil {
		t.Fatal(err)
	}
	mustSyncDirectory(t, k, d, ".")
	crash(d, process)
	expectFile(t, d, "log", "new")
	expectMissing(t, d, "log.swap")
}

func TestOlderNamespaceChangeCannotUndoNewerOne(t *testing.T) {
	// The rename touches a and b; the new a/x touches a only. Syncing a
	// makes the new a/x durable first; syncing b later makes the rename
	// durable, whose "remove a/x" is older and must not remove the new one.
	d, k, process := newTestDisk(1, Faults{})
	for _, dir := range []string{"a", "b"} {
		if err := d.MkdirAll(dir); err != nil {
			t.Fatal(err)
		}
	}
	mustSyncDirectory(t, k, d, ".")
	f := createFile(t, d, "a/x")
	write(t, f, 0, "first")
	mustSync(t, k, f)
	mustSyncDirectory(t, k, d, "a")

	if err := d.Rename("a/x", "b/x"); err != nil {
		t.Fatal(err)
	}
	g := createFile(t, d, "a/x")
	write(t, g, 0, "second")
	mustSync(t, k, g)
	mustSyncDirectory(t, k, d, "a")
	mustSyncDirectory(t, k, d, "b")
	crash(d, process)
	expectFile(t, d, "a/x", "second")
	expectFile(t, d, "b/x", "first")
}

func TestRemoveDurableOnlyAfterSyncDir(t *testing.T) {
	d, k, process := newTestDisk(1, Faults{})
	f := createFile(t, d, "log")
	write(t, f, 0, "kept")
	mustSync(t, k, f)
	mustSyncDirectory(t, k, d, ".")
	if err := d.Remove("log"); err != nil {
		t.Fatal(err)
	}
	crash(d, process)
	expectFile(t, d, "log", "kept")
	if err := d.Remove("log"); err != nil {
		t.Fatal(err)
	}
	mustSyncDirectory(t, k, d, ".")
	crash(d, process)
	expectMissing(t, d, "log")
}

func TestHandlesOpenedBeforeCrashFail(t *testing.T) {
	d, k, process := newTestDisk(1, Faults{})
	f := createFile(t, d, "log")
	write(t, f, 0, "x")
	mustSync(t, k, f)
	mustSyncDirectory(t, k, d, ".")
	crash(d, process)
	checks := map[string]error{}
	_, checks["ReadAt"] = f.ReadAt(make([]byte, 1), 0)
	_, checks["WriteAt"] = f.WriteAt([]byte("y"), 0)
	checks["Truncate"] = f.Truncate(0)
	_, checks["Size"] = f.Size()
	checks["Close"] = f.Close()
	checks["Sync"] = syncFile(t, k, f)
	for _, method := range []string{"ReadAt", "WriteAt", "Truncate", "Size", "Close", "Sync"} {
		if !errors.Is(checks[method], fs.ErrClosed) {
			t.Errorf("%s on a handle from before the crash = %v; want fs.ErrClosed", method, checks[method])
		}
	}
	expectFile(t, d, "log", "x")
}

func TestSyncCompletionsKeepIssueOrder(t *testing.T) {
	d, k, _ := newTestDisk(7, Faults{SyncLatencyMin: 0, SyncLatencyMax: 50 * time.Millisecond})
	f := createFile(t, d, "log")
	var order []int
	for i := range 100 {
		write(t, f, int64(i), "x")
		f.Sync(func(err error) {
			if err != nil {
				t.Fatal(err)
			}
			order = append(order, i)
		})
	}
	run(k)
	for i, got := range order {
		if got != i {
			t.Fatalf("completion %d was sync %d; want issue order", i, got)
		}
	}
	if len(order) != 100 {
		t.Fatalf("%d completions; want 100", len(order))
	}
}

func TestSameSeedSameDisk(t *testing.T) {
	outcome := func(seed uint64) string {
		trace := kernel.NewTrace(nil)
		k := kernel.NewKernel(seed, trace)
		process := kernel.NewProcess("node")
		d := New(k, process, kernel.NewRand(seed, "disk"), Faults{
			SyncLatencyMax: 10 * time.Millisecond, ReadCorruption: 0.2, SyncFailure: 0.2, TornWrite: 0.5,
		})
		rng := kernel.NewRand(seed, "test")
		var log bytes.Buffer
		for round := range 20 {
			name := fmt.Sprintf("f%d", rng.IntN(4))
			f := createFile(t, d, name)
			for range 5 {
				f.WriteAt(bytes.Repeat([]byte{byte(round)}, 1+rng.IntN(6)), int64(rng.IntN(20)))
				f.Sync(func(err error) { fmt.Fprintf(&log, "sync %s %v\n", name, err) })
			}
			d.SyncDir(".", func(err error) { fmt.Fprintf(&log, "syncdir %v\n", err) })
			p := make([]byte, 8)
			n, _ := f.ReadAt(p, 0)
			fmt.Fprintf(&log, "read %x\n", p[:n])
			k.RunUntil(k.Now() + int64(rng.IntN(int(10*time.Millisecond))))
			if rng.IntN(4) == 0 {
				crash(d, process)
			}
		}
		names, _ := d.ReadDir(".")
		for _, name := range names {
			content, _ := readFile(t, d, name)
			fmt.Fprintf(&log, "%s=%x\n", name, content)
		}
		fmt.Fprintf(&log, "stats %+v trace %s", d.Stats(), trace.Hash())
		return log.String()
	}
	for seed := range uint64(10) {
		if first, second := outcome(seed), outcome(seed); first != second {
			t.Fatalf("seed %d ran differently twice:\n%s\n---\n%s", seed, first, second)
		}
	}
	if outcome(1) == outcome(2) {
		t.Fatal("seeds 1 and 2 gave the same run; the seed is not reaching the disk")
	}
}

func TestUnevenDirectorySyncsKeepBothNames(t *testing.T) {
	// Found by TestDiskAgainstModel. The second rename touches only d, so
	// syncing d makes it durable while the first (touching the root too)
	// is not: the root still names the file a, and d names it b. Each
	// synced directory keeps its promise, so the file has two names.
	d, k, process := newTestDisk(1, Faults{})
	if err := d.MkdirAll("d"); err != nil {
		t.Fatal(err)
	}
	f := createFile(t, d, "a")
	write(t, f, 0, "payload")
	mustSync(t, k, f)
	mustSyncDirectory(t, k, d, ".")
	if err := d.Rename("a", "d/a"); err != nil {
		t.Fatal(err)
	}
	if err := d.Rename("d/a", "d/b"); err != nil {
		t.Fatal(err)
	}
	mustSyncDirectory(t, k, d, "d")
	crash(d, process)
	expectFile(t, d, "a", "payload")
	expectFile(t, d, "d/b", "payload")
	// They are one file, as hard links are.
	g := createFile(t, d, "a")
	write(t, g, 0, "PAY")
	expectFile(t, d, "d/b", "PAYload")
	if d.Usage() != int64(len("payload")) {
		t.Fatalf("Usage = %d; a file with two names counts once", d.Usage())
	}
}
