package log_test

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"sluice/core/batch"
	"sluice/core/log"
	"sluice/sim/simdisk"
)

// segmentFiles lists the sizes of the directory's segment files by name.
func segmentFiles(t tester, h *harness) (names []string, sizes []int64) {
	t.Helper()
	entries, err := h.disk.ReadDir(testDir)
	if err != nil {
		t.Fatalf("ReadDir: %v", err)
	}
	for _, name := range entries {
		if !strings.HasSuffix(name, ".log") {
			continue
		}
		f, err := h.disk.OpenFile(testDir+"/"+name, false)
		if err != nil {
			t.Fatalf("open %s: %v", name, err)
		}
		size, _ := f.Size()
		f.Close()
		names = append(names, name)
		sizes = append(sizes, size)
	}
	return names, sizes
}

func TestRollsBySize(t *testing.T) {
	h := newHarness(t, 1, simdisk.Faults{})
	config := smallConfig()
	l := h.open(config)
	var stored [][]byte
	for i := range 40 {
		b := makeBatch(1+i%3, 30+i%50, int64(i))
		mustAppend(t, l, b, 0)
		stored = append(stored, b)
	}
	big := makeBatch(1, 3000, 99) // larger than a segment: goes in alone
	mustAppend(t, l, big, 0)
	stored = append(stored, big)
	mustAppend(t, l, makeBatch(1, 10, 100), 0)

	names, sizes := segmentFiles(t, h)
	if len(names) != l.SegmentCount() || len(names) < 5 {
		t.Fatalf("%d segment files, log says %d", len(names), l.SegmentCount())
	}
	for i, size := range sizes {
		if size > config.SegmentBytes && size != int64(len(big)) {
			t.Fatalf("segment %s holds %d bytes, more than %d", names[i], size, config.SegmentBytes)
		}
	}
	if names[0] != "00000000000000000000.log" {
		t.Fatalf("first segment named %s", names[0])
	}
	got := readAll(t, l)
	for i, b := range stored {
		if !bytes.Equal(got[i], b) {
			t.Fatalf("batch %d differs after rolling", i)
		}
	}
	// Every segment but the last has its index files.
	entries, _ := h.disk.ReadDir(testDir)
	indexes := 0
	for _, name := range entries {
		if strings.HasSuffix(name, ".index") {
			indexes++
		}
	}
	if indexes != l.SegmentCount()-1 {
		t.Fatalf("%d index files for %d sealed segments", indexes, l.SegmentCount()-1)
	}
}

// TestSegmentAgeIsRecordTime: segment.ms is judged as Kafka's
// LogSegment.shouldRoll judges it, from the first batch's max timestamp
// to the incoming batch's. A restart does not start it over; a backfill
// of old records rolls as their timestamps advance, whatever the clock
// says; a segment whose first batch has no timestamp rolls by the time it
// has been active.
func TestSegmentAgeIsRecordTime(t *testing.T) {
	h := newHarness(t, 1, simdisk.Faults{})
	config := log.DefaultConfig()
	config.SegmentAge = time.Hour
	config.RetentionAge = log.Unlimited
	// A backfill: ten hours of records, at once.
	l := h.open(config)
	old := h.nowMilliseconds() - 10*time.Hour.Milliseconds()
	for i := range 20 {
		mustAppend(t, l, makeBatch(1, 10, old+int64(i)*30*time.Minute.Milliseconds()), 0)
	}
	// Rolled before each batch more than an hour past its segment's
	// first (strictly, as Kafka): segments start at 0, 1.5h, 3h, ... 9h.
	if n := l.SegmentCount(); n != 7 {
		t.Fatalf("a backfill of 10 hours with segment.ms 1h left %d segments, want 7", n)
	}

	// A restart, 59 minutes of record time into the active segment:
	// the next batch a minute later in record time rolls.
	h.syncAll(l)
	first := h.nowMilliseconds()
	mustAppend(t, l, makeBatch(1, 10, first+2*time.Hour.Milliseconds()), 0) // rolls: +2h past the last segment's first
	mustAppend(t, l, makeBatch(1, 10, first+2*time.Hour.Milliseconds()+59*time.Minute.Milliseconds()), 0)
	h.syncAll(l)
	h.crash()
	l = h.open(config)
	before := l.SegmentCount()
	mustAppend(t, l, makeBatch(1, 10, first+3*time.Hour.Milliseconds()+1), 0)
	if l.SegmentCount() != before+1 {
		t.Fatalf("after a restart, a batch more than segment.ms past the active segment's first did not roll (%d segments, %d before)", l.SegmentCount(), before)
	}

	// No timestamps: the time active decides.
	h.advance(2 * time.Hour) // roll the active one first (ApplyRetention rolls by time active)
	l.ApplyRetention(l.EndOffset())
	before = l.SegmentCount()
	mustAppend(t, l, makeBatch(1, 10, -1), 0)
	h.advance(59 * time.Minute)
	mustAppend(t, l, makeBatch(1, 10, -1), 0)
	if l.SegmentCount() != before {
		t.Fatalf("a segment without timestamps rolled before an hour active")
	}
	h.advance(2 * time.Minute)
	mustAppend(t, l, makeBatch(1, 10, -1), 0)
	if l.SegmentCount() != before+1 {
		t.Fatalf("a segment without timestamps an hour active did not roll")
	}
}

func TestRollsByAge(t *testing.T) {
	h := newHarness(t, 1, simdisk.Faults{})
	config := log.DefaultConfig()
	config.SegmentAge = time.Minute
	config.RetentionAge = log.Unlimited
	l := h.open(config)
	mustAppend(t, l, makeBatch(1, 10, h.nowMilliseconds()), 0)
	h.advance(59 * time.Second)
	mustAppend(t, l, makeBatch(1, 10, h.nowMilliseconds()), 0)
	if l.SegmentCount() != 1 {
		t.Fatalf("rolled before the segment was a minute old")
	}
	h.advance(2 * time.Second)
	mustAppend(t, l, makeBatch(1, 10, h.nowMilliseconds()), 0)
	if l.SegmentCount() != 2 {
		t.Fatalf("did not roll a segment older than SegmentAge: %d segments", l.SegmentCount())
	}
	// ApplyRetention rolls an old active segment too, but never an empty one.
	h.advance(2 * time.Minute)
	l.ApplyRetention(l.EndOffset())
	if l.SegmentCount() != 3 {
		t.Fatalf("ApplyRetention did not roll the old active segment: %d segments", l.SegmentCount())
	}
	h.advance(2 * time.Minute)
	l.ApplyRetention(l.EndOffset())
	if l.SegmentCount() != 3 {
		t.Fatalf("ApplyRetention rolled an empty segment")
	}
	if len(readAll(t, l)) != 3 {
		t.Fatalf("rolling lost batches")
	}
}

// Every offset reads from the batch holding it, whatever the index
// interval, from the active segment's in-memory index and from index files
// after a reopen.
func TestIndexLookupFindsEveryOffset(t *testing.T) {
	for _, interval := range []int{0, 1, 150, 4096} {
		h := newHarness(t, 1, simdisk.Faults{})
		config := smallConfig()
		config.SegmentBytes = 4000
		config.IndexIntervalBytes = interval
		l := h.open(config)
		var stored [][]byte
		for i := range 120 {
			b := makeBatch(1+i%4, 5+(i*37)%90, int64(i))
			mustAppend(t, l, b, int32(i/40))
			stored = append(stored, b)
		}
		check := func(l *log.Log, when string) {
			for _, b := range stored {
				header, _ := batch.Parse(b)
				for offset := header.BaseOffset; offset <= header.LastOffset(); offset++ {
					got, err := l.Read(offset, l.EndOffset(), 1, true)
					if err != nil || !bytes.Equal(got, b) {
						t.Fatalf("interval %d %s: Read(%d) = %s, %v; want %s", interval, when, offset, describe(got), err, describe(b))
					}
				}
			}
		}
		check(l, "before reopen")
		h.syncAll(l)
		l.Close()
		l = h.open(config)
		check(l, "after reopen")
		h.crash()
		l = h.open(config)
		check(l, "after crash")
	}
}

func TestOffsetForTimestampMatchesAScan(t *testing.T) {
	h := newHarness(t, 3, simdisk.Faults{})
	config := smallConfig()
	config.IndexIntervalBytes = 120
	l := h.open(config)
	type stamped struct {
		base, last, maxTimestamp int64
	}
	var batches []stamped
	timestamps := []int64{100, 90, 150, 150, 120, 300, 200, 310, 305, 400, 50, 410, 500, 499, 650}
	for round := range 4 {
		for i, ts := range timestamps {
			b := makeBatch(1+i%3, 40, ts+int64(round)*1000)
			info := mustAppend(t, l, b, 0)
			batches = append(batches, stamped{info.FirstOffset, info.LastOffset, info.MaxTimestamp})
		}
	}
	if l.SegmentCount() < 4 {
		t.Fatalf("want several segments, have %d", l.SegmentCount())
	}
	check := func(when string) {
		for ts := int64(0); ts <= 4000; ts += 7 {
			var want stamped
			found := false
			for _, b := range batches {
				if b.last >= l.StartOffset() && b.maxTimestamp >= ts {
					want, found = b, true
					break
				}
			}
			got, ok, err := l.OffsetForTimestamp(ts)
			if err != nil || ok != found || (found && (got.Offset != max(want.base, l.StartOffset()) || got.Timestamp != want.maxTimestamp)) {
				t.Fatalf("%s: OffsetForTimestamp(%d) = %+v %v %v, want %+v %v", when, ts, got, ok, err, want, found)
			}
		}
	}
	check("active")
	h.syncAll(l)
	l.Close()
	l = h.open(config)
	check("reopened")
	if err := l.AdvanceStartOffset(batches[20].base + 1); err != nil {
		t.Fatal(err)
	}
	check("after the start moved")
}

func TestReopenRestoresTheSameLog(t *testing.T) {
	h := newHarness(t, 1, simdisk.Faults{})
	config := smallConfig()
	l := h.open(config)
	for i := range 50 {
		mustAppend(t, l, makeBatch(1+i%2, 20+i, int64(i)), int32(i/10))
	}
	if err := l.AdvanceStartOffset(17); err != nil {
		t.Fatal(err)
	}
	before := readAll(t, l)
	epochs := l.EpochEntries()
	h.syncAll(l)
	l.Close()

	l = h.open(config)
	if l.StartOffset() != 17 || l.EndOffset() != 75 || l.SyncedOffset() > l.EndOffset() {
		t.Fatalf("reopened with start %d end %d synced %d", l.StartOffset(), l.EndOffset(), l.SyncedOffset())
	}
	if got := l.EpochEntries(); !equalEntries(got, epochs) {
		t.Fatalf("epochs %v, want %v", got, epochs)
	}
	after := readAll(t, l)
	if len(after) != len(before) {
		t.Fatalf("%d batches after reopen, %d before", len(after), len(before))
	}
	for i := range before {
		if !bytes.Equal(before[i], after[i]) {
			t.Fatalf("batch %d differs after reopen", i)
		}
	}
	// And it goes on appending where it stopped.
	if info := mustAppend(t, l, makeBatch(1, 1, 1), 5); info.FirstOffset != 75 {
		t.Fatalf("append after reopen got offset %d", info.FirstOffset)
	}
}

// TestSegmentIndexBytesRollsWhenAnIndexIsFull: segment.index.bytes bounds
// each index as Kafka's does (8 bytes an offset entry, 12 a time entry),
// and the active segment rolls once either is full. With room for one
// time entry and an entry for every batch after the first, each segment
// takes two batches.
func TestSegmentIndexBytesRollsWhenAnIndexIsFull(t *testing.T) {
	h := newHarness(t, 1, simdisk.Faults{})
	config := log.DefaultConfig()
	config.IndexIntervalBytes = 0
	config.SegmentIndexBytes = 12
	config.RetentionAge = log.Unlimited
	l := h.open(config)
	for i := range 10 {
		mustAppend(t, l, makeBatch(1, 10, h.nowMilliseconds()+int64(i)), 0)
	}
	if n := l.SegmentCount(); n != 5 {
		t.Fatalf("10 batches with indexes of one entry made %d segments, want 5", n)
	}
}

// TestSegmentJitterRollsEachSegmentSomewhatEarlier: segment.jitter.ms
// takes a random amount, drawn per segment, below the smaller of it and
// segment.ms off each segment's roll age, as Kafka's randomSegmentJitter
// does; without it every segment spans segment.ms exactly.
func TestSegmentJitterRollsEachSegmentSomewhatEarlier(t *testing.T) {
	bases := func(jitter time.Duration) []int64 {
		h := newHarness(t, 1, simdisk.Faults{})
		config := log.DefaultConfig()
		config.SegmentAge = time.Hour
		config.SegmentJitter = jitter
		config.RetentionAge = log.Unlimited
		l := h.open(config)
		start := h.nowMilliseconds()
		for minute := range 600 {
			mustAppend(t, l, makeBatch(1, 10, start+int64(minute)*time.Minute.Milliseconds()), 0)
		}
		// A batch a minute: a segment's base offset is the minutes
		// from the start to its first batch.
		return log.SegmentBases(l)[1:]
	}
	plain := bases(0)
	for i, base := range plain {
		if base != int64(61*(i+1)) {
			t.Fatalf("without jitter, segments begin at %v, want every 61 minutes", plain)
		}
	}
	jittered := bases(30 * time.Minute)
	previous, shorter := int64(0), false
	for _, base := range jittered {
		span := base - previous
		if span < 31 || span > 61 {
			t.Fatalf("with 30 minutes of jitter, segments begin at %v: a span of %d minutes", jittered, span)
		}
		shorter = shorter || span < 61
		previous = base
	}
	if !shorter {
		t.Fatalf("with 30 minutes of jitter, no segment rolled early: %v", jittered)
	}
}
