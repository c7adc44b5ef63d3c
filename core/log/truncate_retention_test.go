package log_test

import (
	"bytes"
	"testing"
	"time"

	"sluice/core/batch"
	"sluice/core/log"
	"sluice/sim/simdisk"
)

// fill appends count batches of one to three records, epoch
// LatestEpoch+i/epochEvery, and returns the stored bytes.
func fill(t tester, l *log.Log, count, epochEvery int) [][]byte {
	t.Helper()
	var stored [][]byte
	first := max(l.LatestEpoch(), 0)
	for i := range count {
		b := makeBatch(1+i%3, 30+(i*13)%60, int64(1000+i))
		mustAppend(t, l, b, first+int32(i/epochEvery))
		stored = append(stored, b)
	}
	return stored
}

// prefixUpTo returns the batches whose last offset is below offset.
func prefixUpTo(stored [][]byte, offset int64) [][]byte {
	var prefix [][]byte
	for _, b := range stored {
		if h, _ := batch.Parse(b); h.LastOffset() < offset {
			prefix = append(prefix, b)
		}
	}
	return prefix
}

func sameBatches(t tester, got, want [][]byte) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%d batches, want %d", len(got), len(want))
	}
	for i := range want {
		if !bytes.Equal(got[i], want[i]) {
			t.Fatalf("batch %d is %s, want %s", i, describe(got[i]), describe(want[i]))
		}
	}
}

func TestTruncateWithinTheActiveSegment(t *testing.T) {
	h := newHarness(t, 1, simdisk.Faults{})
	config := log.DefaultConfig()
	config.IndexIntervalBytes = 50
	l := h.open(config)
	stored := fill(t, l, 30, 10)
	h.syncAll(l)
	end := l.EndOffset()

	// Offset 41 lies inside a batch: that whole batch goes.
	if err := l.TruncateTo(41); err != nil {
		t.Fatal(err)
	}
	want := prefixUpTo(stored, 41)
	last, _ := batch.Parse(want[len(want)-1])
	if l.EndOffset() != last.NextOffset() || l.EndOffset() > 41 {
		t.Fatalf("end %d after TruncateTo(41), want %d", l.EndOffset(), last.NextOffset())
	}
	if l.SyncedOffset() != l.EndOffset() {
		t.Fatalf("synced %d not lowered to the end %d", l.SyncedOffset(), l.EndOffset())
	}
	if l.LatestEpoch() != 1 {
		t.Fatalf("latest epoch %d after cutting epoch 2 away", l.LatestEpoch())
	}
	sameBatches(t, readAll(t, l), want)
	if err := l.TruncateTo(end + 10); err != nil || l.EndOffset() != last.NextOffset() {
		t.Fatalf("TruncateTo past the end changed the log: %v", err)
	}
	_, err := l.Read(41, 100, 100, true)
	expectError(t, err, log.ErrOffsetOutOfRange)

	// The log goes on from the cut, with a new epoch.
	h.drain() // the fence, if any, lifts with the sync TruncateTo started
	b := makeBatch(2, 10, 5)
	info := mustAppend(t, l, b, 7)
	if info.FirstOffset != last.NextOffset() {
		t.Fatalf("append after truncation at %d, want %d", info.FirstOffset, last.NextOffset())
	}
	sameBatches(t, readAll(t, l), append(want, b))
	if e, o := l.EndOffsetForEpoch(1); e != 1 || o != info.FirstOffset {
		t.Fatalf("EndOffsetForEpoch(1) = (%d, %d), want (1, %d)", e, o, info.FirstOffset)
	}
}

func TestTruncateAcrossSegments(t *testing.T) {
	h := newHarness(t, 1, simdisk.Faults{})
	config := smallConfig()
	l := h.open(config)
	stored := fill(t, l, 80, 20)
	segments := l.SegmentCount()
	if segments < 5 {
		t.Fatalf("want several segments, have %d", segments)
	}
	h.syncAll(l)

	target := l.EndOffset() / 3
	if err := l.TruncateTo(target); err != nil {
		t.Fatal(err)
	}
	if l.SegmentCount() >= segments {
		t.Fatalf("segments after the cut not deleted: %d", l.SegmentCount())
	}
	names, _ := segmentFiles(t, h)
	if len(names) != l.SegmentCount() {
		t.Fatalf("%d segment files for %d segments", len(names), l.SegmentCount())
	}
	want := prefixUpTo(stored, target)
	sameBatches(t, readAll(t, l), want)

	// Below the recovery point, appends wait for the truncation to be
	// durable; the sync TruncateTo started lifts the fence.
	_, err := l.Append(makeBatch(1, 1, 1), 9)
	expectError(t, err, log.ErrTruncationNotDurable)
	h.drain()
	b := makeBatch(1, 1, 1)
	mustAppend(t, l, b, 9)
	want = append(want, b)
	sameBatches(t, readAll(t, l), want)

	// Truncating to a segment's exact base offset empties that segment.
	h.syncAll(l)
	stored = append(want, fill(t, l, 40, 100)...)
	h.syncAll(l)
	h.drain()
	// Find a segment base: read the first batch of the last segment via the files.
	names, _ = segmentFiles(t, h)
	var base int64
	for _, c := range names[len(names)-1][:20] {
		base = base*10 + int64(c-'0')
	}
	if err := l.TruncateTo(base); err != nil {
		t.Fatal(err)
	}
	if l.EndOffset() != base {
		t.Fatalf("end %d after truncating to segment base %d", l.EndOffset(), base)
	}
	sameBatches(t, readAll(t, l), prefixUpTo(stored, base))
	h.drain()
	mustAppend(t, l, makeBatch(1, 1, 1), 9)
}

func TestTruncateToTheStartInsideABatchEmptiesTheLog(t *testing.T) {
	h := newHarness(t, 1, simdisk.Faults{})
	l := h.open(log.DefaultConfig())
	mustAppend(t, l, makeBatch(5, 10, 1), 2)
	mustAppend(t, l, makeBatch(5, 10, 1), 2)
	if err := l.AdvanceStartOffset(3); err != nil {
		t.Fatal(err)
	}
	_, err := l.Read(2, 100, 100, true)
	expectError(t, err, log.ErrOffsetOutOfRange)
	expectError(t, l.TruncateTo(2), log.ErrOffsetOutOfRange)
	if err := l.TruncateTo(4); err != nil {
		t.Fatal(err)
	}
	if l.StartOffset() != 3 || l.EndOffset() != 3 || l.LatestEpoch() != -1 {
		t.Fatalf("start %d end %d epoch %d", l.StartOffset(), l.EndOffset(), l.LatestEpoch())
	}
	h.drain()
	if info := mustAppend(t, l, makeBatch(1, 1, 1), 3); info.FirstOffset != 3 {
		t.Fatalf("appended at %d", info.FirstOffset)
	}
}

func TestAdvanceStartOffsetDeletesWholeSegmentsBelow(t *testing.T) {
	h := newHarness(t, 1, simdisk.Faults{})
	l := h.open(smallConfig())
	stored := fill(t, l, 60, 15)
	segments := l.SegmentCount()
	start := l.EndOffset() / 2
	if err := l.AdvanceStartOffset(start); err != nil {
		t.Fatal(err)
	}
	if l.StartOffset() != start || l.SegmentCount() >= segments {
		t.Fatalf("start %d, %d of %d segments left", l.StartOffset(), l.SegmentCount(), segments)
	}
	h.drain()
	if names, _ := segmentFiles(t, h); len(names) != l.SegmentCount() {
		t.Fatalf("%d segment files for %d segments after the new start became durable", len(names), l.SegmentCount())
	}
	if err := l.AdvanceStartOffset(start - 5); err != nil || l.StartOffset() != start {
		t.Fatalf("start moved back to %d (%v)", l.StartOffset(), err)
	}
	expectError(t, l.AdvanceStartOffset(l.EndOffset()+1), log.ErrOffsetOutOfRange)
	_, err := l.Read(start-1, l.EndOffset(), 100, true)
	expectError(t, err, log.ErrOffsetOutOfRange)
	// The first read returns the batch holding the start offset.
	var want [][]byte
	for _, b := range stored {
		if h, _ := batch.Parse(b); h.LastOffset() >= start {
			want = append(want, b)
		}
	}
	sameBatches(t, readAll(t, l), want)
	for _, e := range l.EpochEntries() {
		if e.StartOffset < start {
			t.Fatalf("epoch entry %v below the start %d", e, start)
		}
	}
	// Up to the end: everything but the active segment goes.
	if err := l.AdvanceStartOffset(l.EndOffset()); err != nil {
		t.Fatal(err)
	}
	if l.SegmentCount() != 1 {
		t.Fatalf("%d segments with the start at the end", l.SegmentCount())
	}
	if got, err := l.Read(l.EndOffset(), l.EndOffset()+1, 100, true); err != nil || len(got) != 0 {
		t.Fatalf("read at the end: %d bytes %v", len(got), err)
	}
}

func TestRetentionByBytes(t *testing.T) {
	h := newHarness(t, 1, simdisk.Faults{})
	config := smallConfig()
	config.RetentionBytes = 3000
	config.RetentionAge = log.Unlimited
	l := h.open(config)
	fill(t, l, 100, 100)
	total := l.Size()
	deleted := l.ApplyRetention(l.EndOffset())
	if deleted == 0 || l.Size() < config.RetentionBytes || l.Size() >= total {
		t.Fatalf("deleted %d segments, size %d (was %d, retention %d)", deleted, l.Size(), total, config.RetentionBytes)
	}
	// The files go once the new start is durable: the sync
	// ApplyRetention started writes the checkpoint, then removes them.
	before, _ := segmentFiles(t, h)
	if len(before) == l.SegmentCount() {
		t.Fatalf("segment files removed before the new start was durable")
	}
	h.drain()
	names, sizes := segmentFiles(t, h)
	// One more deletion would have gone below the limit.
	if l.Size()-sizes[0] >= config.RetentionBytes {
		t.Fatalf("retention stopped early: size %d, first segment %d", l.Size(), sizes[0])
	}
	if len(names) != l.SegmentCount() {
		t.Fatalf("%d files, %d segments", len(names), l.SegmentCount())
	}
	if first := names[0]; first != baseFileName(l.StartOffset()) {
		t.Fatalf("start %d but first segment %s", l.StartOffset(), first)
	}
	if again := l.ApplyRetention(l.EndOffset()); again != 0 {
		t.Fatalf("second ApplyRetention deleted %d", again)
	}
	// Zero empties the log, the active segment's records too (rolled
	// first), as in Kafka: an empty active segment is all that is left.
	config.RetentionBytes = 0
	l.SetConfig(config)
	l.ApplyRetention(l.EndOffset())
	if l.SegmentCount() != 1 || l.StartOffset() != l.EndOffset() || l.Size() != 0 {
		t.Fatalf("retention.bytes 0 left %d segments, %d bytes, start %d of end %d", l.SegmentCount(), l.Size(), l.StartOffset(), l.EndOffset())
	}
}

func TestRetentionByAge(t *testing.T) {
	h := newHarness(t, 1, simdisk.Faults{})
	config := smallConfig()
	config.RetentionAge = time.Hour
	l := h.open(config)
	now := h.nowMilliseconds()
	// Old records, then new ones; batch timestamps drive age, not the clock.
	for i := range 30 {
		mustAppend(t, l, makeBatch(1, 100, now-3*time.Hour.Milliseconds()+int64(i)), 0)
	}
	oldEnd := l.EndOffset()
	for i := range 30 {
		mustAppend(t, l, makeBatch(1, 100, now+int64(i)), 0)
	}
	deleted := l.ApplyRetention(l.EndOffset())
	if deleted == 0 {
		t.Fatalf("nothing deleted")
	}
	// Every old-only segment went; the one holding the first new batch stays.
	if l.StartOffset() > oldEnd || l.StartOffset() < oldEnd-10 {
		t.Fatalf("start %d, old records ended at %d", l.StartOffset(), oldEnd)
	}
	// Two hours on, everything is old, the active segment's records too.
	// Below the high watermark they stay; at it, they go, the segment
	// rolled first.
	h.advance(2 * time.Hour)
	l.ApplyRetention(l.EndOffset() - 1)
	if l.SegmentCount() != 1 || l.StartOffset() == l.EndOffset() {
		t.Fatalf("with the high watermark below the end: %d segments, start %d of end %d", l.SegmentCount(), l.StartOffset(), l.EndOffset())
	}
	l.ApplyRetention(l.EndOffset())
	if l.SegmentCount() != 1 || l.StartOffset() != l.EndOffset() {
		t.Fatalf("with the high watermark at the end: %d segments, start %d of end %d", l.SegmentCount(), l.StartOffset(), l.EndOffset())
	}
}

// A quiet topic's records expire by retention.ms although nothing rolled
// their segment (segment.ms is a week), as Kafka's deletableSegments takes
// the active segment once the high watermark is at the log end; Sluice
// kept them until segment.ms.
func TestRetentionByAgeEmptiesAQuietLog(t *testing.T) {
	h := newHarness(t, 1, simdisk.Faults{})
	config := log.DefaultConfig()
	config.RetentionAge = time.Hour
	l := h.open(config)
	for range 10 {
		mustAppend(t, l, makeBatch(1, 100, h.nowMilliseconds()), 0)
	}
	h.syncAll(l)
	h.advance(30 * time.Minute)
	if n := l.ApplyRetention(l.EndOffset()); n != 0 || l.StartOffset() != 0 {
		t.Fatalf("records half an hour old: %d segments removed, start %d", n, l.StartOffset())
	}
	h.advance(90 * time.Minute)
	if n := l.ApplyRetention(l.EndOffset()); n != 1 || l.StartOffset() != 10 || l.EndOffset() != 10 {
		t.Fatalf("records two hours old: %d segments removed, start %d of end %d", n, l.StartOffset(), l.EndOffset())
	}
	h.drain()
	names, _ := segmentFiles(t, h)
	if len(names) != 1 || names[0] != baseFileName(10) {
		t.Fatalf("segment files %v, want the empty active one at 10", names)
	}
	// The log goes on from there.
	mustAppend(t, l, makeBatch(1, 100, h.nowMilliseconds()), 0)
	if l.EndOffset() != 11 {
		t.Fatalf("end %d after an append", l.EndOffset())
	}
}

func baseFileName(offset int64) string {
	digits := []byte("00000000000000000000")
	for i := len(digits) - 1; offset > 0; i-- {
		digits[i] = byte('0' + offset%10)
		offset /= 10
	}
	return string(digits) + ".log"
}

// TestRetentionStopsAtUpTo checks that retention never removes a segment
// holding offsets at or above the bound its caller gives (the high
// watermark), however far over its size limit the log is.
func TestRetentionStopsAtUpTo(t *testing.T) {
	h := newHarness(t, 11, simdisk.Faults{})
	config := smallConfig()
	config.RetentionBytes = 0
	l := h.open(config)
	for range 20 {
		mustAppend(t, l, makeBatch(4, 100, h.nowMilliseconds()), 0)
	}
	h.syncAll(l)
	if l.SegmentCount() < 4 {
		t.Fatalf("want several segments, have %d", l.SegmentCount())
	}
	bound := l.EndOffset() / 2
	l.ApplyRetention(bound)
	if l.StartOffset() > bound {
		t.Fatalf("retention moved the start to %d, past the bound %d", l.StartOffset(), bound)
	}
	if l.StartOffset() == 0 {
		t.Fatalf("retention removed nothing below the bound %d", bound)
	}
}

func TestMaxTimestampAcrossSegments(t *testing.T) {
	h := newHarness(t, 12, simdisk.Faults{})
	l := h.open(smallConfig())
	now := h.nowMilliseconds()
	stamps := []int64{now, now + 50, now + 900, now + 10, now + 900, now + 30}
	var bases []int64
	for _, ts := range stamps {
		for range 3 { // several batches per timestamp, so segments roll
			bases = append(bases, mustAppend(t, l, makeBatch(2, 100, ts), 0).FirstOffset)
		}
	}
	if l.SegmentCount() < 3 {
		t.Fatalf("want several segments, have %d", l.SegmentCount())
	}
	offset, ts, found, err := l.MaxTimestamp(l.EndOffset())
	if err != nil || !found || ts != now+900 || offset != bases[6] {
		t.Fatalf("max over the whole log: offset %d ts %d found %v err %v; want %d %d", offset, ts, found, err, bases[6], now+900)
	}
	offset, ts, found, _ = l.MaxTimestamp(bases[6])
	if !found || ts != now+50 || offset != bases[3] {
		t.Fatalf("max below %d: offset %d ts %d; want %d %d", bases[6], offset, ts, bases[3], now+50)
	}
	if _, _, found, _ := l.MaxTimestamp(0); found {
		t.Fatalf("nothing lies below offset 0")
	}
}

// With the start moved inside a segment past its largest timestamp, that
// batch is deleted for readers: the largest timestamp is the largest of
// the live batches, in that segment or after it. The segment's tracked
// maximum named the deleted batch, and MaxTimestamp skipped the whole
// segment: nothing found, or a later segment's smaller maximum (log
// workload seed 6, check time-lookup).
func TestMaxTimestampIgnoresBatchesBelowTheStart(t *testing.T) {
	h := newHarness(t, 12, simdisk.Faults{})
	l := h.open(log.DefaultConfig())
	now := h.nowMilliseconds()
	var bases []int64
	for _, ts := range []int64{now + 900, now + 30, now + 50, now + 10} {
		bases = append(bases, mustAppend(t, l, makeBatch(2, 100, ts), 0).FirstOffset)
	}
	if err := l.AdvanceStartOffset(bases[1]); err != nil {
		t.Fatal(err)
	}
	offset, ts, found, err := l.MaxTimestamp(l.EndOffset())
	if err != nil || !found || ts != now+50 || offset != bases[2] {
		t.Fatalf("max of the live batches: offset %d ts %d found %v err %v; want %d %d", offset, ts, found, err, bases[2], now+50)
	}
	// The start inside the batch of the largest timestamp: it is live.
	if err := l.AdvanceStartOffset(bases[2] + 1); err != nil {
		t.Fatal(err)
	}
	offset, ts, found, err = l.MaxTimestamp(l.EndOffset())
	if err != nil || !found || ts != now+50 || offset != bases[2]+1 {
		t.Fatalf("max with the start inside its batch: offset %d ts %d found %v err %v; want %d %d", offset, ts, found, err, bases[2]+1, now+50)
	}
}
