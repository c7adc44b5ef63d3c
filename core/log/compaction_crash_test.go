package log_test

import (
	"fmt"
	"strconv"
	"strings"
	"testing"

	"sluice/core/log"
	"sluice/sim/simdisk"
)

// compactionScenario builds a log whose next compaction pass rewrites
// several groups of several segments each: a first pass shrinks the
// segments, then new records supersede most of what is left.
func compactionScenario(t tester, h *harness) *log.Log {
	l := h.open(compactConfig())
	for i := range 80 {
		mustAppend(t, l, keyedBatch(h.nowMilliseconds(), fmt.Sprintf("k%d=a%d%s", i%9, i, strings.Repeat("p", 40)), fmt.Sprintf("u%d=%d", i%30, i)), 0)
	}
	h.syncAll(l)
	compactAll(t, h, l, log.CompactOptions{UpTo: l.EndOffset()})
	for i := range 40 {
		mustAppend(t, l, keyedBatch(h.nowMilliseconds(), fmt.Sprintf("k%d=b%d", i%9, i), fmt.Sprintf("u%d", 2*i)), 0)
	}
	h.syncAll(l)
	return l
}

// passWithoutSync runs a whole compaction pass; its swaps then wait for the
// sync rounds the pass started.
func passWithoutSync(t tester, l *log.Log) {
	t.Helper()
	for range 1000 {
		r, err := l.Compact(log.CompactOptions{UpTo: l.EndOffset()})
		if err != nil {
			t.Fatalf("Compact: %v", err)
		}
		if r.PassFinished {
			return
		}
		if !r.PassStarted && r.SegmentsRewritten == 0 {
			t.Fatalf("no compaction pass is due")
		}
	}
	t.Fatalf("the pass did not finish")
}

// recordsIn are the records with offsets in [low, high).
func recordsIn(all []storedRecord, low, high int64) string {
	var in []storedRecord
	for _, r := range all {
		if r.offset >= low && r.offset < high {
			in = append(in, r)
		}
	}
	return describeRecords(in)
}

// TestCompactionSwapSurvivesACrashAtEveryStep crashes the node after each
// event of the sync rounds that swap compacted segments in: before the new
// file is synced, between the commit and the finishing renames, before the
// checkpoint... Every recovery must find, for each compacted group, either
// all the old segments or the new one, and then compact to the same
// result as a run without a crash. With torn crashes, unsynced file writes
// and directory changes are partly kept.
func TestCompactionSwapSurvivesACrashAtEveryStep(t *testing.T) {
	for _, torn := range []bool{false, true} {
		oldSeen, newSeen, mixed := crashAtEverySwapStep(t, torn)
		if mixed != "" {
			t.Fatal(mixed)
		}
		if oldSeen == 0 || newSeen == 0 {
			t.Fatalf("torn=%v: recoveries found %d old and %d new groups; both must occur", torn, oldSeen, newSeen)
		}
	}
}

// The test above has teeth: with the swap committed before the new file is
// synced (a planted bug), some crash leaves a group neither old nor new.
func TestCrashingEverySwapStepCatchesAnUnsyncedCommit(t *testing.T) {
	_, _, mixed := crashAtEverySwapStep(t, true, log.CanaryCompactionSwapsUnsynced)
	if mixed == "" {
		t.Fatalf("no crash caught a swap committed before its segment was durable")
	}
	t.Log(mixed)
}

// crashAtEverySwapStep runs the scenario's pass, crashing after 0, 1, 2...
// events of the sync rounds, until the rounds finish before the crash. It
// counts the groups recovered old and new, and describes the first crash
// that recovered anything else, or compacting again gave another result.
func crashAtEverySwapStep(t *testing.T, torn bool, canaries ...string) (oldSeen, newSeen int, mixed string) {
	// The run without a crash says what each group becomes.
	reference := newHarness(t, 1, simdisk.Faults{})
	l := compactionScenario(t, reference)
	before, _ := logRecords(t, l)
	passWithoutSync(t, l)
	reference.syncAll(l)
	after, _ := logRecords(t, l)
	names, _ := segmentFiles(t, reference)
	var groups []int64 // base offsets of the compacted segments, then the cleaner offset
	for _, name := range names {
		base, _ := strconv.ParseInt(strings.TrimSuffix(name, ".log"), 10, 64)
		if base < l.CleanerOffset() {
			groups = append(groups, base)
		}
	}
	groups = append(groups, l.CleanerOffset())
	if len(groups) < 3 || describeRecords(before) == describeRecords(after) {
		t.Fatalf("the scenario compacts %d groups; it needs several", len(groups)-1)
	}

	for crashAfter := 0; ; crashAfter++ {
		h := newHarness(t, 1, simdisk.Faults{})
		h.canaries = canaries
		l := compactionScenario(t, h)
		passWithoutSync(t, l)
		steps := 0
		for steps < crashAfter && h.kernel.Step() {
			steps++
		}
		if torn {
			h.disk.SetFaults(simdisk.Faults{TornWrite: 1})
		}
		h.crash()
		h.disk.SetFaults(simdisk.Faults{})
		l = h.open(compactConfig())
		got, _ := logRecords(t, l)
		for i := range len(groups) - 1 {
			in := recordsIn(got, groups[i], groups[i+1])
			switch in {
			case recordsIn(before, groups[i], groups[i+1]):
				oldSeen++
			case recordsIn(after, groups[i], groups[i+1]):
				newSeen++
			default:
				return oldSeen, newSeen, fmt.Sprintf("torn=%v, crash after %d steps: group [%d, %d) holds\n %s\nneither old\n %s\nnor new\n %s", torn, crashAfter,
					groups[i], groups[i+1], in, recordsIn(before, groups[i], groups[i+1]), recordsIn(after, groups[i], groups[i+1]))
			}
		}
		if rest := recordsIn(got, groups[len(groups)-1], l.EndOffset()); rest != recordsIn(before, groups[len(groups)-1], l.EndOffset()) {
			return oldSeen, newSeen, fmt.Sprintf("torn=%v, crash after %d steps: the records after the compacted groups changed", torn, crashAfter)
		}
		// Nothing of the swap is left behind, and compacting again
		// reaches the same log.
		entries, _ := h.disk.ReadDir(testDir)
		for _, name := range entries {
			if strings.HasSuffix(name, ".cleaned") || strings.HasSuffix(name, ".swap") {
				return oldSeen, newSeen, fmt.Sprintf("torn=%v, crash after %d steps: %s left after recovery", torn, crashAfter, name)
			}
		}
		h.drain()
		compactAll(t, h, l, log.CompactOptions{UpTo: l.EndOffset()})
		if again, _ := logRecords(t, l); describeRecords(again) != describeRecords(after) {
			return oldSeen, newSeen, fmt.Sprintf("torn=%v, crash after %d steps: compacting again gave\n %s\nnot\n %s", torn, crashAfter, describeRecords(again), describeRecords(after))
		}
		if steps < crashAfter {
			return oldSeen, newSeen, "" // the rounds had finished before the crash
		}
	}
}

// A truncation that deletes or cuts compacted segments whose swap has not
// happened yet takes the swap with it: once the truncation is durable, a
// crash brings back exactly the truncated log, with nothing of the swap.
func TestTruncationBeforeASwapFinishesCancelsIt(t *testing.T) {
	for _, step := range []int{0, 1, 2, 3, 4, 6, 8} {
		h := newHarness(t, 1, simdisk.Faults{})
		l := compactionScenario(t, h)
		passWithoutSync(t, l)
		for range step {
			h.kernel.Step()
		}
		compacted, _ := logRecords(t, l)
		cut := compacted[len(compacted)/3].offset
		if err := l.TruncateTo(cut); err != nil {
			t.Fatalf("TruncateTo(%d): %v", cut, err)
		}
		truncated, _ := logRecords(t, l)
		h.syncAll(l)
		h.crash()
		l = h.open(compactConfig())
		if got, _ := logRecords(t, l); describeRecords(got) != describeRecords(truncated) {
			t.Fatalf("after %d steps: recovered\n %s\nnot the truncated log\n %s", step, describeRecords(got), describeRecords(truncated))
		}
		entries, _ := h.disk.ReadDir(testDir)
		for _, name := range entries {
			if strings.HasSuffix(name, ".cleaned") || strings.HasSuffix(name, ".swap") {
				t.Fatalf("after %d steps: %s left behind", step, name)
			}
		}
		if l.CleanerOffset() > l.EndOffset() {
			t.Fatalf("after %d steps: cleaner offset %d above the end %d", step, l.CleanerOffset(), l.EndOffset())
		}
	}
}

// A compaction swap's last step writes the new segment's index files
// after it has put the segment in place, below the recovery point, and
// only the next round syncs them. A crash before that can tear them, an
// entry cut short and zero-filled, and recovery trusts index files below
// the recovery point: it took a time index entry naming offset 144 for a
// segment whose first batch is 146, or a timestamp of 2^40. Crashed with
// torn writes after every step of the swaps' rounds, from many disks'
// seeds, recovery must end with the indexes a scan of what it kept
// builds.
func TestRecoveryNeverTrustsATornIndexFile(t *testing.T) {
	wrong := 0
	for seed := uint64(1); seed <= 12; seed++ {
		for crashAfter := 0; ; crashAfter++ {
			h := newHarness(t, seed, simdisk.Faults{})
			l := compactionScenario(t, h)
			passWithoutSync(t, l)
			steps := 0
			for steps < crashAfter && h.kernel.Step() {
				steps++
			}
			h.disk.SetFaults(simdisk.Faults{TornWrite: 1})
			h.crash()
			h.disk.SetFaults(simdisk.Faults{})
			l = h.open(compactConfig())
			trusted := log.Indexes(l)
			l.Close()
			h.drain()
			// What a scan builds: the same files without their indexes.
			names, _ := h.disk.ReadDir(testDir)
			for _, name := range names {
				if strings.HasSuffix(name, ".index") || strings.HasSuffix(name, ".timeindex") {
					if err := h.disk.Remove(testDir + "/" + name); err != nil {
						t.Fatal(err)
					}
				}
			}
			l = h.open(compactConfig())
			for base, scanned := range log.Indexes(l) {
				if got, ok := trusted[base]; ok && got != scanned {
					t.Errorf("disk seed %d, crash after %d steps: segment %d recovered with %s, a scan builds %s", seed, crashAfter, base, got, scanned)
					wrong++
				}
			}
			if wrong > 3 {
				t.FailNow()
			}
			if steps < crashAfter {
				break // the rounds had finished before the crash
			}
		}
	}
}
