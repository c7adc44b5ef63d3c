package log_test

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"pgregory.net/rapid"

	"sluice/core/log"
	"sluice/sim/simdisk"
)

// compactionMachine checks compaction against a deliberately dumb model:
// the list of every record appended, by offset. Whatever appends,
// compaction steps, syncs, truncations, restarts and crashes happened, the
// log must hold, for every key, its latest record (a tombstone may be gone,
// but then so is every record of its key), and nothing but records of the
// model, each at its own offset, in order. Nothing at or above the highest
// UpTo ever passed to Compact may be missing.
type compactionMachine struct {
	h      *harness
	config log.Config
	l      *log.Log

	records []storedRecord // appended and not truncated, by offset
	start   int64
	upToMax int64
	// budget is how much one Compact call reads: small ones spread a pass
	// over many calls, with everything else happening in between.
	budget int64
}

// compactionRemovals counts, over every run, the records compaction
// removed, so the test can insist that it removed some.
var compactionRemovals, compactionTombstones, compactionPasses int64

func (s *compactionMachine) Append(t *rapid.T) {
	var all []byte
	for range rapid.IntRange(1, 8).Draw(t, "batches") {
		var texts []string
		for range rapid.IntRange(1, 4).Draw(t, "records") {
			key := string(rune('a' + rapid.IntRange(0, 11).Draw(t, "key")))
			if rapid.IntRange(0, 4).Draw(t, "tombstone") == 0 {
				texts = append(texts, key)
			} else {
				texts = append(texts, fmt.Sprintf("%s=%d", key, rapid.IntRange(0, 1<<20).Draw(t, "value")))
			}
		}
		all = append(all, keyedBatch(s.h.nowMilliseconds(), texts...)...)
	}
	_, err := s.l.Append(all, 0)
	if errors.Is(err, log.ErrTruncationNotDurable) {
		return
	}
	if err != nil {
		t.Fatalf("Append: %v", err)
	}
	appended, _ := records(t, testCodecs{}, all) // stamped in place with their offsets
	s.records = append(s.records, appended...)
}

func (s *compactionMachine) Compact(t *rapid.T) {
	upTo := s.l.SyncedOffset()
	r, err := s.l.Compact(log.CompactOptions{UpTo: upTo})
	if err != nil {
		t.Fatalf("Compact: %v", err)
	}
	s.upToMax = max(s.upToMax, upTo)
	s.count(r)
}

// CompactFully syncs and compacts until no pass is due.
func (s *compactionMachine) CompactFully(t *rapid.T) {
	for range 100 {
		s.Sync(t)
		upTo := s.l.SyncedOffset()
		r, err := s.l.Compact(log.CompactOptions{UpTo: upTo})
		if err != nil {
			t.Fatalf("Compact: %v", err)
		}
		s.upToMax = max(s.upToMax, upTo)
		s.count(r)
		if !r.PassStarted && !r.PassFinished && r.SegmentsRewritten == 0 {
			return
		}
	}
	t.Fatalf("compaction did not settle")
}

func (s *compactionMachine) count(r log.CompactionResult) {
	if r.PassFinished {
		compactionPasses++
	}
	compactionRemovals += r.RecordsRemoved
	compactionTombstones += r.TombstonesRemoved
}

func (s *compactionMachine) Sync(t *rapid.T) {
	s.l.Sync()
	s.h.drain()
}

// SyncPartly lets a few disk events happen, so that crashes also land in
// the middle of sync rounds and compaction swaps.
func (s *compactionMachine) SyncPartly(t *rapid.T) {
	s.l.Sync()
	for range rapid.IntRange(0, 3).Draw(t, "steps") {
		s.h.kernel.Step()
	}
}

func (s *compactionMachine) PassTime(t *rapid.T) {
	s.h.advance(time.Duration(rapid.Int64Range(0, int64(30*time.Minute)).Draw(t, "elapsed")))
}

// Truncate cuts where a follower may: never below what compaction may
// have used (Kafka: never below the high watermark).
func (s *compactionMachine) Truncate(t *rapid.T) {
	offset := rapid.Int64Range(max(s.upToMax, s.start), max(s.upToMax, s.start, s.l.EndOffset())).Draw(t, "offset")
	if err := s.l.TruncateTo(offset); err != nil {
		t.Fatalf("TruncateTo(%d): %v", offset, err)
	}
	if s.l.EndOffset() > offset && offset < s.l.EndOffset() {
		t.Fatalf("TruncateTo(%d) left the end at %d", offset, s.l.EndOffset())
	}
	s.cutModel(s.l.EndOffset())
	// Until its sync completes, a crash may bring the cut batches back;
	// the model keeps no such alternatives, so let it complete.
	s.h.drain()
}

func (s *compactionMachine) AdvanceStart(t *rapid.T) {
	offset := rapid.Int64Range(s.start, s.start+(s.l.EndOffset()-s.start)/4).Draw(t, "start")
	if err := s.l.AdvanceStartOffset(offset); err != nil {
		t.Fatalf("AdvanceStartOffset(%d): %v", offset, err)
	}
	s.start = max(s.start, offset)
}

func (s *compactionMachine) Reopen(t *rapid.T) {
	s.l.Close()
	s.reopen(t)
	// A start offset not yet durable may come back lower.
	s.start = s.l.StartOffset()
}

func (s *compactionMachine) Crash(t *rapid.T) {
	synced := s.l.SyncedOffset()
	s.h.disk.SetFaults(simdisk.Faults{TornWrite: rapid.Float64Range(0, 1).Draw(t, "tornWrite")})
	s.h.crash()
	s.h.disk.SetFaults(simdisk.Faults{})
	s.reopen(t)
	if s.l.EndOffset() < synced {
		t.Fatalf("recovered end %d is below the synced offset %d", s.l.EndOffset(), synced)
	}
	// A crash may bring back a start offset that was not durable yet.
	s.start = s.l.StartOffset()
	s.cutModel(s.l.EndOffset())
}

func (s *compactionMachine) reopen(t *rapid.T) {
	l, err := log.Open(s.h.world(), testDir, s.config)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	s.l = l
	log.SetCompactionBytesPerCall(l, s.budget)
	s.h.drain()
}

func (s *compactionMachine) cutModel(end int64) {
	for len(s.records) > 0 && s.records[len(s.records)-1].offset >= end {
		s.records = s.records[:len(s.records)-1]
	}
}

func (s *compactionMachine) Check(t *rapid.T) {
	if s.l.StartOffset() != s.start {
		t.Fatalf("start %d, model %d", s.l.StartOffset(), s.start)
	}
	got, headers := logRecords(t, s.l)
	if n := len(headers); n > 0 && headers[n-1].NextOffset() != s.l.EndOffset() {
		t.Fatalf("the last batch ends at %d, the log at %d", headers[n-1].NextOffset(), s.l.EndOffset())
	}
	byOffset := map[int64]storedRecord{}
	for _, r := range s.records {
		byOffset[r.offset] = r
	}
	present := map[string]bool{}
	for _, r := range got {
		want, ok := byOffset[r.offset]
		if !ok || want != r {
			t.Fatalf("the log holds %s, the model %v at that offset", r, want)
		}
		if r.offset >= s.start {
			present[r.key] = true
		}
	}
	latest := map[string]storedRecord{}
	var keys []string
	for _, r := range s.records {
		if r.offset < s.start {
			continue
		}
		if _, seen := latest[r.key]; !seen {
			keys = append(keys, r.key)
		}
		latest[r.key] = r
	}
	kept := map[int64]bool{}
	for _, r := range got {
		kept[r.offset] = true
	}
	for _, key := range keys {
		r := latest[key]
		switch {
		case kept[r.offset]:
		case !r.tombstone:
			t.Fatalf("the latest record of key %q, %s, is gone: %s", key, r, describeRecords(got))
		case present[key]:
			t.Fatalf("the tombstone %s is gone but older records of its key remain: %s", r, describeRecords(got))
		}
	}
	for _, r := range s.records {
		if r.offset >= max(s.upToMax, s.start) && !kept[r.offset] {
			t.Fatalf("%s at or above UpTo %d was removed", r, s.upToMax)
		}
	}
}

func TestCompactionAgainstModel(t *testing.T) {
	compactionRemovals, compactionTombstones = 0, 0
	rapid.Check(t, func(t *rapid.T) {
		h := newHarness(t, rapid.Uint64().Draw(t, "seed"), simdisk.Faults{})
		config := log.DefaultConfig()
		config.SegmentBytes = rapid.Int64Range(256, 2048).Draw(t, "segmentBytes")
		config.IndexIntervalBytes = rapid.IntRange(0, 300).Draw(t, "indexInterval")
		config.DeleteRetention = time.Minute
		config.MinCompactionLag = time.Duration(rapid.IntRange(0, 1).Draw(t, "lag")) * 5 * time.Minute
		config.MinCleanableDirtyRatio = rapid.SampledFrom([]float64{0, 0.3, 0.6}).Draw(t, "ratio")
		l, err := log.Open(h.world(), testDir, config)
		if err != nil {
			t.Fatalf("Open: %v", err)
		}
		s := &compactionMachine{h: h, config: config, l: l}
		s.budget = rapid.SampledFrom([]int64{1, 300, 1 << 30}).Draw(t, "budget")
		log.SetCompactionBytesPerCall(l, s.budget)
		t.Repeat(map[string]func(*rapid.T){
			"append":       s.Append,
			"compact":      s.Compact,
			"compactFully": s.CompactFully,
			"sync":         s.Sync,
			"syncPartly":   s.SyncPartly,
			"passTime":     s.PassTime,
			"truncate":     s.Truncate,
			"advanceStart": s.AdvanceStart,
			"reopen":       s.Reopen,
			"crash":        s.Crash,
			"":             s.Check,
		})
	})
	// Hundreds of records go in a typical run of 100 cases; tombstones go
	// in some runs only (TestTombstonesStayForDeleteRetentionThenGo covers
	// them for certain), so only their count is reported.
	t.Logf("%d passes removed %d records and %d tombstones", compactionPasses, compactionRemovals, compactionTombstones)
	if compactionRemovals == 0 {
		t.Fatalf("the runs removed no record; the test exercised nothing")
	}
}
