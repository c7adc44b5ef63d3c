package log_test

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"sluice/core/batch"
	"sluice/core/log"
	"sluice/sim/simdisk"
)

// appended remembers what a test appended, record by record and batch by
// batch, to compute what compaction must keep.
type appended struct {
	records []storedRecord
	batches [][2]int64 // base and last offset of each batch
}

func (a *appended) add(t tester, l *log.Log, b []byte) {
	t.Helper()
	info := mustAppend(t, l, b, 0)
	got, _ := records(t, testCodecs{}, b)
	for _, r := range got {
		a.records = append(a.records, r)
	}
	a.batches = append(a.batches, [2]int64{info.FirstOffset, info.LastOffset})
}

// latestBelow is, for each key, the offset of its last record below end.
func (a *appended) latestBelow(end int64) map[string]int64 {
	latest := map[string]int64{}
	for _, r := range a.records {
		if r.offset < end && !r.keyless {
			latest[r.key] = r.offset
		}
	}
	return latest
}

// activeBase is the base offset of the last segment file on disk.
func activeBase(t tester, h *harness) int64 {
	t.Helper()
	names, _ := segmentFiles(t, h)
	base, err := strconv.ParseInt(strings.TrimSuffix(names[len(names)-1], ".log"), 10, 64)
	if err != nil {
		t.Fatalf("segment name %q", names[len(names)-1])
	}
	return base
}

func describeRecords(rs []storedRecord) string {
	var parts []string
	for _, r := range rs {
		parts = append(parts, r.String())
	}
	return strings.Join(parts, " ")
}

// checkBatchesAreOriginal fails unless every batch spans exactly the
// offsets of a batch that was appended: compaction keeps batch boundaries.
func checkBatchesAreOriginal(t tester, headers []batch.Header, a *appended) {
	t.Helper()
	for _, h := range headers {
		if !slices.Contains(a.batches, [2]int64{h.BaseOffset, h.LastOffset()}) {
			t.Fatalf("batch [%d, %d] is not one that was appended", h.BaseOffset, h.LastOffset())
		}
	}
}

func TestCompactionKeepsTheLatestRecordPerKeyAndLeavesTheActiveSegment(t *testing.T) {
	h := newHarness(t, 1, simdisk.Faults{})
	l := h.open(compactConfig())
	var a appended
	for i := range 60 {
		a.add(t, l, keyedBatch(h.nowMilliseconds(), fmt.Sprintf("k%d=v%d", i%7, 2*i), fmt.Sprintf("k%d=v%d", (i+3)%7, 2*i+1)))
	}
	h.syncAll(l)
	active := activeBase(t, h)
	segmentsBefore := l.SegmentCount()
	if segmentsBefore < 4 {
		t.Fatalf("want several segments, have %d", segmentsBefore)
	}

	result := compactAll(t, h, l, log.CompactOptions{UpTo: l.EndOffset()})
	if !result.PassFinished || result.RecordsRemoved == 0 || result.SegmentsRewritten == 0 {
		t.Fatalf("compaction did nothing: %+v", result)
	}
	if l.CleanerOffset() != active {
		t.Fatalf("cleaner offset %d, want the active segment's base %d", l.CleanerOffset(), active)
	}
	latest := a.latestBelow(active)
	var want []storedRecord
	for _, r := range a.records {
		if r.offset >= active || latest[r.key] == r.offset {
			want = append(want, r)
		}
	}
	got, headers := logRecords(t, l)
	if describeRecords(got) != describeRecords(want) {
		t.Fatalf("after compaction:\n got %s\nwant %s", describeRecords(got), describeRecords(want))
	}
	checkBatchesAreOriginal(t, headers, &a)
	if activeBase(t, h) != active {
		t.Fatalf("the active segment moved from %d to %d", active, activeBase(t, h))
	}
	// Nothing left to do: a second pass finds no dirty bytes.
	if again := compactAll(t, h, l, log.CompactOptions{UpTo: l.EndOffset()}); again.PassStarted {
		t.Fatalf("a second pass started with nothing dirty: %+v", again)
	}

	// The same log after a restart, and after a crash: compaction is durable.
	l.Close()
	l = h.open(compactConfig())
	if again, _ := logRecords(t, l); describeRecords(again) != describeRecords(want) {
		t.Fatalf("after reopening:\n got %s\nwant %s", describeRecords(again), describeRecords(want))
	}
	if l.CleanerOffset() != active {
		t.Fatalf("cleaner offset after reopening %d, want %d", l.CleanerOffset(), active)
	}
	h.crash()
	l = h.open(compactConfig())
	if again, _ := logRecords(t, l); describeRecords(again) != describeRecords(want) {
		t.Fatalf("after a crash:\n got %s\nwant %s", describeRecords(again), describeRecords(want))
	}
	h.drain()

	// Segments shrunk by the first pass are merged by the next one.
	for i := range 30 {
		a.add(t, l, keyedBatch(h.nowMilliseconds(), fmt.Sprintf("k%d=w%d", i%7, i)))
	}
	h.syncAll(l)
	segmentsBefore = l.SegmentCount()
	active = activeBase(t, h)
	compactAll(t, h, l, log.CompactOptions{UpTo: l.EndOffset()})
	if l.SegmentCount() >= segmentsBefore {
		t.Fatalf("compaction merged no segments: %d before, %d after", segmentsBefore, l.SegmentCount())
	}
	latest = a.latestBelow(active)
	want = nil
	for _, r := range a.records {
		if r.offset >= active || latest[r.key] == r.offset {
			want = append(want, r)
		}
	}
	if got, _ := logRecords(t, l); describeRecords(got) != describeRecords(want) {
		t.Fatalf("after the second pass:\n got %s\nwant %s", describeRecords(got), describeRecords(want))
	}
}

func TestCompactionStopsAtUpToAndTheActiveSegment(t *testing.T) {
	h := newHarness(t, 1, simdisk.Faults{})
	l := h.open(compactConfig())
	// Everything in the active segment: nothing is cleanable.
	for i := range 4 {
		mustAppend(t, l, keyedBatch(h.nowMilliseconds(), "k=v"+strconv.Itoa(i)), 0)
	}
	h.syncAll(l)
	if r := compactAll(t, h, l, log.CompactOptions{UpTo: l.EndOffset()}); r.PassStarted || r.RecordsRemoved != 0 {
		t.Fatalf("compacted the active segment: %+v", r)
	}
	var a appended
	for i := range 40 {
		a.add(t, l, keyedBatch(h.nowMilliseconds(), "k=v"+strconv.Itoa(i), "j"+strconv.Itoa(i%3)+"=w"))
	}
	h.syncAll(l)
	// UpTo inside the second segment: only the first is cleanable.
	names, _ := segmentFiles(t, h)
	second, _ := strconv.ParseInt(strings.TrimSuffix(names[1], ".log"), 10, 64)
	third, _ := strconv.ParseInt(strings.TrimSuffix(names[2], ".log"), 10, 64)
	before, _ := logRecords(t, l)
	compactAll(t, h, l, log.CompactOptions{UpTo: third - 1})
	after, _ := logRecords(t, l)
	if l.CleanerOffset() != second {
		t.Fatalf("cleaner offset %d, want %d", l.CleanerOffset(), second)
	}
	for _, r := range before {
		if r.offset >= second && !slices.Contains(after, r) {
			t.Fatalf("record %s above UpTo's segment was removed", r)
		}
	}
	if len(after) >= len(before) {
		t.Fatalf("nothing below UpTo was compacted")
	}
}

func TestTombstonesStayForDeleteRetentionThenGo(t *testing.T) {
	h := newHarness(t, 1, simdisk.Faults{})
	config := compactConfig()
	config.DeleteRetention = time.Hour
	l := h.open(config)
	filler := func(round int) {
		for i := range 12 {
			mustAppend(t, l, keyedBatch(h.nowMilliseconds(), fmt.Sprintf("f%d-%d=%s", round, i, strings.Repeat("x", 60))), 0)
		}
	}
	mustAppend(t, l, keyedBatch(h.nowMilliseconds(), "gone=1", "kept=1"), 0)
	mustAppend(t, l, keyedBatch(h.nowMilliseconds(), "gone"), 0) // the tombstone
	filler(0)
	h.syncAll(l)
	contains := func(want string) bool {
		got, _ := logRecords(t, l)
		return strings.Contains(" "+describeRecords(got)+" ", want)
	}

	// First pass: the tombstone removes the older value but stays.
	compactAll(t, h, l, log.CompactOptions{UpTo: l.EndOffset()})
	if contains(":gone=1 ") || !contains(":gone ") || !contains(":kept=1 ") {
		t.Fatalf("after the first pass: %v", describeRecords(must(logRecords(t, l))))
	}
	// Later passes within the retention keep it.
	h.advance(30 * time.Minute)
	filler(1)
	h.syncAll(l)
	if r := compactAll(t, h, l, log.CompactOptions{UpTo: l.EndOffset()}); !r.PassFinished || r.TombstonesRemoved != 0 || !contains(":gone ") {
		t.Fatalf("a tombstone younger than DeleteRetention went: %+v", r)
	}
	// Once its segment is older than the retention, it goes.
	h.advance(31 * time.Minute)
	filler(2)
	h.syncAll(l)
	r := compactAll(t, h, l, log.CompactOptions{UpTo: l.EndOffset()})
	if r.TombstonesRemoved != 1 || contains(":gone ") || contains(":gone=") || !contains(":kept=1 ") {
		t.Fatalf("after the retention: %+v, %s", r, describeRecords(must(logRecords(t, l))))
	}
}

func must[T any, U any](value T, _ U) T { return value }

func TestMinCompactionLagKeepsYoungSegments(t *testing.T) {
	h := newHarness(t, 1, simdisk.Faults{})
	config := compactConfig()
	config.MinCompactionLag = 10 * time.Minute
	l := h.open(config)
	for i := range 30 {
		mustAppend(t, l, keyedBatch(h.nowMilliseconds(), "k=v"+strconv.Itoa(i), fmt.Sprintf("j%d=%s", i, strings.Repeat("y", 50))), 0)
	}
	h.syncAll(l)
	if r := compactAll(t, h, l, log.CompactOptions{UpTo: l.EndOffset()}); r.PassStarted || r.RecordsRemoved != 0 {
		t.Fatalf("compacted records younger than the lag: %+v", r)
	}
	h.advance(11 * time.Minute)
	if r := compactAll(t, h, l, log.CompactOptions{UpTo: l.EndOffset()}); !r.PassFinished || r.RecordsRemoved == 0 {
		t.Fatalf("compacted nothing once the lag passed: %+v", r)
	}
}

// compactTwentyKeysTwice writes 20 keys twice over, every batch dirty,
// and compacts it all, so that a test starts from a clean log.
func compactTwentyKeysTwice(t *testing.T, h *harness, l *log.Log) {
	t.Helper()
	for i := range 40 {
		mustAppend(t, l, keyedBatch(h.nowMilliseconds(), fmt.Sprintf("k%d=%s", i%20, strings.Repeat("z", 40))), 0)
	}
	h.syncAll(l)
	if r := compactAll(t, h, l, log.CompactOptions{UpTo: l.EndOffset()}); !r.PassFinished {
		t.Fatalf("all-dirty log not compacted: %+v", r)
	}
}

func TestMinCleanableDirtyRatioDecidesWhetherAPassRuns(t *testing.T) {
	h := newHarness(t, 1, simdisk.Faults{})
	config := compactConfig()
	config.MinCleanableDirtyRatio = 0.5
	l := h.open(config)
	compactTwentyKeysTwice(t, h, l)
	// One more small dirty segment is far below half of the log.
	cleanBytes := l.Size()
	for l.Size() < cleanBytes+cleanBytes/4 {
		mustAppend(t, l, keyedBatch(h.nowMilliseconds(), "k1="+strings.Repeat("w", 40)), 0)
	}
	h.syncAll(l)
	if r := compactAll(t, h, l, log.CompactOptions{UpTo: l.EndOffset()}); r.PassStarted {
		t.Fatalf("a pass ran below the dirty ratio: %+v", r)
	}
}

func TestReadingARemovedOffsetReturnsTheNextBatch(t *testing.T) {
	h := newHarness(t, 1, simdisk.Faults{})
	l := h.open(compactConfig())
	var a appended
	for i := range 30 {
		a.add(t, l, keyedBatch(h.nowMilliseconds(), "same=v"+strconv.Itoa(i), fmt.Sprintf("u%d=%s", i, strings.Repeat("q", 40))))
	}
	h.syncAll(l)
	compactAll(t, h, l, log.CompactOptions{UpTo: l.EndOffset()})
	stored, _ := logRecords(t, l)
	// Every offset, removed or not, reads as the batch holding it or the
	// next one that remains.
	for offset := l.StartOffset(); offset < l.EndOffset(); offset++ {
		b, err := l.Read(offset, l.EndOffset(), 1, true)
		if err != nil {
			t.Fatalf("Read(%d): %v", offset, err)
		}
		headers := splitRead(t, b)
		if len(headers) != 1 || headers[0].LastOffset() < offset {
			t.Fatalf("Read(%d) returned %v", offset, headers)
		}
		var wantBase int64 = -1
		for _, r := range stored {
			if r.offset >= offset {
				wantBase = r.batchBase
				break
			}
		}
		if wantBase >= 0 && headers[0].BaseOffset > wantBase {
			t.Fatalf("Read(%d) skipped the batch at %d for %d", offset, wantBase, headers[0].BaseOffset)
		}
	}
	// Truncating into a gap ends the log where the batch before it ends.
	gapAt := int64(-1)
	for _, r := range a.records {
		if r.offset > l.CleanerOffset()/2 && !slices.Contains(stored, r) {
			gapAt = r.offset
			break
		}
	}
	if gapAt < 0 {
		t.Fatalf("no removed offset to truncate to")
	}
	if err := l.TruncateTo(gapAt); err != nil {
		t.Fatalf("TruncateTo(%d): %v", gapAt, err)
	}
	if l.EndOffset() > gapAt {
		t.Fatalf("TruncateTo(%d) left the end at %d", gapAt, l.EndOffset())
	}
	got, headers := logRecords(t, l)
	if len(headers) > 0 && headers[len(headers)-1].NextOffset() != l.EndOffset() {
		t.Fatalf("the log ends at %d but its last batch at %d", l.EndOffset(), headers[len(headers)-1].NextOffset())
	}
	for _, r := range stored {
		if r.offset < l.EndOffset() && !slices.Contains(got, r) {
			t.Fatalf("truncation removed %s below the new end %d", r, l.EndOffset())
		}
	}
	h.syncAll(l)
	mustAppend(t, l, keyedBatch(h.nowMilliseconds(), "after=1"), 0)
	h.syncAll(l)
	l.Close()
	l = h.open(compactConfig())
	if again, _ := logRecords(t, l); len(again) != len(got)+1 {
		t.Fatalf("after reopening, %d records, want %d", len(again), len(got)+1)
	}
}

func TestIdempotentProducersLastBatchIsKeptEmpty(t *testing.T) {
	h := newHarness(t, 1, simdisk.Faults{})
	l := h.open(compactConfig())
	const producer = 7
	sequence := int32(0)
	var producerBatches []log.AppendInfo
	for i := range 6 {
		spec := batch.Spec{BaseTimestamp: h.nowMilliseconds(), ProducerID: producer, BaseSequence: sequence,
			Records: []batch.Record{keyedRecord("p"+strconv.Itoa(i%2)+"=a", 0), keyedRecord("p"+strconv.Itoa(i%2)+"=b", 1)}}
		sequence += 2
		producerBatches = append(producerBatches, mustAppend(t, l, batch.Build(spec), 0))
	}
	// Later records of the same keys from another writer supersede every
	// record the producer wrote; then enough to seal the segments.
	for i := range 30 {
		mustAppend(t, l, keyedBatch(h.nowMilliseconds(), "p0=c", "p1=c", fmt.Sprintf("fill%d=%s", i, strings.Repeat("f", 30))), 0)
	}
	h.syncAll(l)
	last := producerBatches[len(producerBatches)-1]
	options := log.CompactOptions{
		UpTo: l.EndOffset(),
		ProducerLastOffsets: func() map[int64]int64 {
			return map[int64]int64{producer: last.LastOffset}
		},
	}
	compactAll(t, h, l, options)
	_, headers := logRecords(t, l)
	var kept []batch.Header
	for _, header := range headers {
		switch {
		case header.ProducerID != producer:
		case header.BaseOffset == 0:
			// The log's first batch starts epoch 0, and stays for that
			// (empty): TestCompactionKeepsTheFirstBatchOfEachEpoch.
			if header.RecordCount != 0 {
				t.Fatalf("the first batch kept %d records, want none", header.RecordCount)
			}
		default:
			kept = append(kept, header)
		}
	}
	if len(kept) != 1 {
		t.Fatalf("%d batches of the producer kept, want only its last: %+v", len(kept), kept)
	}
	k := kept[0]
	if k.BaseOffset != last.FirstOffset || k.LastOffset() != last.LastOffset || k.RecordCount != 0 ||
		k.BaseSequence != sequence-2 || k.LastSequence() != sequence-1 {
		t.Fatalf("the producer's last batch became %+v", k)
	}
}

func TestCompressedBatchesAreCompactedWithCodecsAndLeftIntactWithout(t *testing.T) {
	for _, withCodecs := range []bool{false, true} {
		t.Run(fmt.Sprintf("codecs=%v", withCodecs), func(t *testing.T) {
			h := newHarness(t, 1, simdisk.Faults{})
			if withCodecs {
				h.codecs = testCodecs{}
			}
			l := h.open(compactConfig())
			var a appended
			for i := range 30 {
				b := gzipBatch(h.nowMilliseconds(), "z=old"+strconv.Itoa(i), "y"+strconv.Itoa(i%4)+"=v", fmt.Sprintf("x%d=%s", i, strings.Repeat("c", 30)))
				info := mustAppend(t, l, b, 0)
				a.batches = append(a.batches, [2]int64{info.FirstOffset, info.LastOffset})
			}
			h.syncAll(l)
			before, _ := records(t, testCodecs{}, joinAll(t, l))
			r := compactAll(t, h, l, log.CompactOptions{UpTo: l.EndOffset()})
			after, headers := records(t, testCodecs{}, joinAll(t, l))
			checkBatchesAreOriginal(t, headers, &a)
			if !withCodecs {
				if r.BatchesLeftIntact == 0 || describeRecords(after) != describeRecords(before) {
					t.Fatalf("without codecs the compressed batches changed: %+v", r)
				}
				return
			}
			if r.RecordsRemoved == 0 || len(after) >= len(before) {
				t.Fatalf("with codecs nothing was compacted: %+v", r)
			}
			for _, header := range headers {
				if header.Compression() != batch.CompressionGzip && header.RecordCount > 0 {
					t.Fatalf("batch at %d lost its compression", header.BaseOffset)
				}
			}
		})
	}
}

func joinAll(t tester, l *log.Log) []byte {
	var all []byte
	for _, b := range readAll(t, l) {
		all = append(all, b...)
	}
	return all
}

func TestFollowerStoresCompactedBatchesWithGaps(t *testing.T) {
	// A leader's compacted log, as a follower receives it.
	leader := newHarness(t, 1, simdisk.Faults{})
	ll := leader.open(compactConfig())
	for i := range 40 {
		mustAppend(t, ll, keyedBatch(leader.nowMilliseconds(), "k"+strconv.Itoa(i%3)+"=v"+strconv.Itoa(i), "u"+strconv.Itoa(i)+"=w"), int32(i/10))
	}
	leader.syncAll(ll)
	compactAll(t, leader, ll, log.CompactOptions{UpTo: ll.EndOffset()})
	served := joinAll(t, ll)
	want, _ := records(t, testCodecs{}, served)

	follower := newHarness(t, 2, simdisk.Faults{})
	fl := follower.open(smallConfig())
	for s := (batch.Scanner{Buf: served}); s.Next(); {
		if _, err := fl.AppendReplicated(append([]byte(nil), s.Batch()...)); err != nil {
			t.Fatalf("AppendReplicated of the batch at %d: %v", s.Header().BaseOffset, err)
		}
	}
	follower.syncAll(fl)
	if fl.EndOffset() != ll.EndOffset() || !slices.Equal(fl.EpochEntries(), ll.EpochEntries()) {
		t.Fatalf("follower ends at %d with epochs %v, leader at %d with %v", fl.EndOffset(), fl.EpochEntries(), ll.EndOffset(), ll.EpochEntries())
	}
	for _, reopen := range []bool{false, true} {
		if reopen {
			follower.crash()
			fl = follower.open(smallConfig())
		}
		got, _ := records(t, testCodecs{}, joinAll(t, fl))
		if describeRecords(got) != describeRecords(want) {
			t.Fatalf("follower (reopened %v) holds\n %s\nleader serves\n %s", reopen, describeRecords(got), describeRecords(want))
		}
	}
}

// Passes spread over many calls (a small read budget: each call reads one
// batch more, then stops) reach the same records as one pass done at
// once, with reads and syncs between their steps; a truncation below a
// pass's offset map abandons it.
func TestPassesSpanManyCallsAndATruncationAbandonsOne(t *testing.T) {
	build := func(h *harness) *log.Log {
		l := h.open(compactConfig())
		for i := range 60 {
			mustAppend(t, l, keyedBatch(h.nowMilliseconds(), fmt.Sprintf("k%d=v%d", i%5, i), fmt.Sprintf("w%d=%d", i%11, i)), 0)
		}
		h.syncAll(l)
		return l
	}
	reference := newHarness(t, 1, simdisk.Faults{})
	rl := build(reference)
	upTo := rl.EndOffset()
	compactAll(t, reference, rl, log.CompactOptions{UpTo: upTo})
	want, _ := logRecords(t, rl)

	h := newHarness(t, 1, simdisk.Faults{})
	l := build(h)
	log.SetCompactionBytesPerCall(l, 1)
	calls, passes := 0, 0
	for ; calls < 1000; calls++ {
		r, err := l.Compact(log.CompactOptions{UpTo: upTo})
		if err != nil {
			t.Fatalf("Compact: %v", err)
		}
		if r.PassFinished {
			passes++
		}
		if r.BytesRead == 0 && !r.PassFinished {
			break // no pass was due
		}
		// Between steps the log serves reads and syncs as ever.
		logRecords(t, l)
		h.syncAll(l)
	}
	if passes < 3 || calls < 2*passes {
		t.Fatalf("%d passes in %d calls; the budget should spread them", passes, calls)
	}
	if got, _ := logRecords(t, l); describeRecords(got) != describeRecords(want) {
		t.Fatalf("passes in steps gave\n %s\nnot\n %s", describeRecords(got), describeRecords(want))
	}

	// A truncation below the map's end voids the pass in progress.
	h = newHarness(t, 1, simdisk.Faults{})
	l = build(h)
	log.SetCompactionBytesPerCall(l, 1)
	if r, err := l.Compact(log.CompactOptions{UpTo: upTo}); err != nil || !r.PassStarted || r.PassFinished {
		t.Fatalf("first step: %+v, %v", r, err)
	}
	if err := l.TruncateTo(1); err != nil {
		t.Fatal(err)
	}
	h.drain()
	r, err := l.Compact(log.CompactOptions{UpTo: l.EndOffset()})
	if err != nil || r.PassFinished || r.SegmentsRewritten > 0 {
		t.Fatalf("the abandoned pass went on: %+v, %v", r, err)
	}
	if l.CleanerOffset() > l.EndOffset() {
		t.Fatalf("cleaner offset %d above the end %d", l.CleanerOffset(), l.EndOffset())
	}
}

// TestTimestampLookupPassesOverABatchCompactionEmptied: compaction keeps
// some batches with no records left (here the first of the log, whose
// superseded record was the newest), still carrying their max timestamp.
// A lookup by timestamp must not answer with such a batch, which holds no
// record to start from: Kafka's search walks records and passes over it.
func TestTimestampLookupPassesOverABatchCompactionEmptied(t *testing.T) {
	h := newHarness(t, 1, simdisk.Faults{})
	l := h.open(compactConfig())
	now := h.nowMilliseconds()
	mustAppend(t, l, keyedBatch(now+100, "k=v1"), 0)
	mustAppend(t, l, keyedBatch(now, "k=v2"), 0)
	mustAppend(t, l, keyedBatch(now+60, "f="+strings.Repeat("x", 900)), 0)
	mustAppend(t, l, keyedBatch(now+70, "g=1"), 0) // rolls the segment
	h.syncAll(l)
	compactAll(t, h, l, log.CompactOptions{UpTo: l.EndOffset()})
	b, err := l.Read(0, l.EndOffset(), 1<<20, true)
	if err != nil {
		t.Fatal(err)
	}
	if _, headers := records(t, testCodecs{}, b); len(headers) == 0 || headers[0].BaseOffset != 0 || headers[0].RecordCount != 0 || headers[0].MaxTimestamp != now+100 {
		t.Fatalf("the log's first batch after compaction is %+v; the test wants it emptied, keeping its max timestamp", headers[0])
	}
	got, found, err := l.OffsetForTimestamp(now + 50)
	if err != nil || !found || got.Offset != 2 || got.Timestamp != now+60 {
		t.Fatalf("OffsetForTimestamp(now+50) = %+v, %v, %v; want offset 2 at now+60", got, found, err)
	}
}

// TestMaxCompactionLagStartsAPassBelowTheDirtyRatio: as Kafka's
// LogCleanerManager does, a dirty segment whose first batch is older than
// max.compaction.lag.ms makes a pass due whatever min.cleanable.dirty.ratio
// says; younger, the ratio decides as before.
func TestMaxCompactionLagStartsAPassBelowTheDirtyRatio(t *testing.T) {
	h := newHarness(t, 1, simdisk.Faults{})
	config := compactConfig()
	config.MinCleanableDirtyRatio = 0.99
	config.MaxCompactionLag = time.Hour
	l := h.open(config)
	compactTwentyKeysTwice(t, h, l)
	// A small dirty section, far below the ratio.
	for range 3 {
		mustAppend(t, l, keyedBatch(h.nowMilliseconds(), "k1="+strings.Repeat("w", 40)), 0)
	}
	mustAppend(t, l, keyedBatch(h.nowMilliseconds(), "k2="+strings.Repeat("w", 200)), 0)
	mustAppend(t, l, keyedBatch(h.nowMilliseconds(), "k3="+strings.Repeat("w", 200)), 0)
	h.syncAll(l)
	if r := compactAll(t, h, l, log.CompactOptions{UpTo: l.EndOffset()}); r.PassStarted {
		t.Fatalf("a pass ran below the dirty ratio before max.compaction.lag.ms: %+v", r)
	}
	h.advance(61 * time.Minute)
	if r := compactAll(t, h, l, log.CompactOptions{UpTo: l.EndOffset()}); !r.PassStarted || r.RecordsRemoved == 0 {
		t.Fatalf("no pass once a dirty segment was older than max.compaction.lag.ms: %+v", r)
	}
}

// TestACompactedLogRollsAtMaxCompactionLag: a compacted log's active
// segment rolls at the smaller of segment.ms and max.compaction.lag.ms
// (Kafka's LogConfig.maxSegmentMs), so its records can be compacted in
// time; a log that is not compacted rolls at segment.ms alone.
func TestACompactedLogRollsAtMaxCompactionLag(t *testing.T) {
	for _, compacted := range []bool{true, false} {
		h := newHarness(t, 1, simdisk.Faults{})
		config := log.DefaultConfig()
		config.Compacted = compacted
		config.MaxCompactionLag = time.Hour
		config.RetentionAge = log.Unlimited
		l := h.open(config)
		start := h.nowMilliseconds()
		mustAppend(t, l, keyedBatch(start, "k=1"), 0)
		mustAppend(t, l, keyedBatch(start+61*time.Minute.Milliseconds(), "k=2"), 0)
		want := 1
		if compacted {
			want = 2
		}
		if n := l.SegmentCount(); n != want {
			t.Errorf("compacted %v: %d segments after records 61 minutes apart, want %d", compacted, n, want)
		}
	}
}
