package simdisk

import (
	"errors"
	"math/bits"
	"testing"
	"time"

	"sluice/core"
)

func TestFailedSyncLosesItsDataAtTheNextCrash(t *testing.T) {
	d, k, process := newTestDisk(1, Faults{})
	f := createFile(t, d, "log")
	mustSyncDirectory(t, k, d, ".")

	d.SetFaults(Faults{SyncFailure: 1})
	write(t, f, 0, "AAAA")
	if err := syncFile(t, k, f); err == nil {
		t.Fatal("Sync with SyncFailure=1 succeeded")
	}
	// Still readable: the pages are clean, not gone.
	expectFile(t, d, "log", "AAAA")

	d.SetFaults(Faults{})
	write(t, f, 4, "BBBB")
	mustSync(t, k, f)
	crash(d, process)
	// The later sync made only its own write durable; the failed one's
	// bytes are a hole.
	expectFile(t, d, "log", "\x00\x00\x00\x00BBBB")
	if got := d.Stats(); got.SyncsFailed != 1 {
		t.Fatalf("Stats().SyncsFailed = %d; want 1", got.SyncsFailed)
	}
}

func TestFailedSyncDirLosesItsEntriesAtTheNextCrash(t *testing.T) {
	d, k, process := newTestDisk(1, Faults{SyncFailure: 1})
	f := createFile(t, d, "log")
	write(t, f, 0, "data")
	if err := syncDirectory(t, k, d, "."); err == nil {
		t.Fatal("SyncDir with SyncFailure=1 succeeded")
	}
	d.SetFaults(Faults{})
	mustSync(t, k, f)
	// A later SyncDir covers only what is still pending: not the create
	// the failed one dropped.
	mustSyncDirectory(t, k, d, ".")
	expectFile(t, d, "log", "data")
	crash(d, process)
	expectMissing(t, d, "log")
}

func TestReadCorruptionIsTransient(t *testing.T) {
	d, _, _ := newTestDisk(1, Faults{ReadCorruption: 1})
	f := createFile(t, d, "log")
	want := []byte("the quick brown fox")
	write(t, f, 0, string(want))
	for range 50 {
		got := make([]byte, len(want))
		if n, err := f.ReadAt(got, 0); n != len(want) || err != nil {
			t.Fatalf("ReadAt = %d, %v", n, err)
		}
		flipped := 0
		for i := range got {
			flipped += bits.OnesCount8(got[i] ^ want[i])
		}
		if flipped != 1 {
			t.Fatalf("a corrupted read differs in %d bits; want exactly 1", flipped)
		}
	}
	d.SetFaults(Faults{})
	expectFile(t, d, "log", string(want))
	if got := d.Stats().ReadsCorrupted; got != 50 {
		t.Fatalf("Stats().ReadsCorrupted = %d; want 50", got)
	}
}

func TestFullDiskShortWrite(t *testing.T) {
	d, _, _ := newTestDisk(1, Faults{CapacityBytes: 10})
	f := createFile(t, d, "a")
	write(t, f, 0, "012345")
	n, err := f.WriteAt([]byte("6789XY"), 6)
	if n != 4 || !errors.Is(err, core.ErrDiskFull) {
		t.Fatalf("WriteAt past capacity = %d, %v; want 4, ErrDiskFull", n, err)
	}
	expectFile(t, d, "a", "0123456789")
	if d.Usage() != 10 {
		t.Fatalf("Usage = %d; want 10", d.Usage())
	}
	// Overwriting in place needs no space.
	write(t, f, 0, "abc")
	// Another file cannot grow; a write past the room writes nothing.
	g := createFile(t, d, "b")
	if n, err := g.WriteAt([]byte("x"), 0); n != 0 || !errors.Is(err, core.ErrDiskFull) {
		t.Fatalf("WriteAt on a full disk = %d, %v; want 0, ErrDiskFull", n, err)
	}
	if err := f.Truncate(11); !errors.Is(err, core.ErrDiskFull) {
		t.Fatalf("Truncate past capacity = %v; want ErrDiskFull", err)
	}
	expectFile(t, d, "a", "abc3456789")

	// Space comes back when the last name and handle go.
	if err := d.Remove("a"); err != nil {
		t.Fatal(err)
	}
	if d.Usage() != 10 {
		t.Fatalf("Usage with an open unlinked file = %d; want 10", d.Usage())
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if d.Usage() != 0 {
		t.Fatalf("Usage after the last handle closed = %d; want 0", d.Usage())
	}
	write(t, g, 0, "0123456789")
	if got := d.Stats().WritesRefusedFull; got != 3 {
		t.Fatalf("Stats().WritesRefusedFull = %d; want 3", got)
	}
}

func TestRenameOverFileFreesItsSpace(t *testing.T) {
	d, _, _ := newTestDisk(1, Faults{})
	for _, name := range []string{"from", "to"} {
		f := createFile(t, d, name)
		write(t, f, 0, name)
		f.Close()
	}
	if err := d.Rename("from", "to"); err != nil {
		t.Fatal(err)
	}
	if d.Usage() != int64(len("from")) {
		t.Fatalf("Usage = %d; want %d", d.Usage(), len("from"))
	}
}

func TestSyncLatencyStaysInBounds(t *testing.T) {
	const low, high = 2 * time.Millisecond, 3 * time.Millisecond
	d, k, _ := newTestDisk(1, Faults{SyncLatencyMin: low, SyncLatencyMax: high})
	for range 50 {
		f := createFile(t, d, "log")
		start := k.Now()
		mustSync(t, k, f)
		if elapsed := time.Duration(k.Now() - start); elapsed < low || elapsed > high {
			t.Fatalf("a sync took %v; want within [%v, %v]", elapsed, low, high)
		}
		f.Close()
	}
}

func TestInvalidFaultsPanic(t *testing.T) {
	invalid := []Faults{
		{SyncLatencyMin: -1},
		{SyncLatencyMin: 2, SyncLatencyMax: 1},
		{ReadCorruption: 1.5},
		{SyncFailure: -0.1},
		{CapacityBytes: -1},
	}
	d, _, _ := newTestDisk(1, Faults{})
	for _, faults := range invalid {
		if faults.Validate() == nil {
			t.Fatalf("Validate(%+v) = nil; want an error", faults)
		}
		func() {
			defer func() {
				if recover() == nil {
					t.Fatalf("SetFaults(%+v) did not panic", faults)
				}
			}()
			d.SetFaults(faults)
		}()
	}
}
