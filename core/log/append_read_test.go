package log_test

import (
	"bytes"
	"testing"

	"sluice/core/batch"
	"sluice/core/log"
	"sluice/sim/simdisk"
)

func TestAppendStampsOffsetsAndEpochsAndReadsThemBack(t *testing.T) {
	h := newHarness(t, 1, simdisk.Faults{})
	l := h.open(log.DefaultConfig())

	first := makeBatch(3, 10, 1000)
	info := mustAppend(t, l, first, 4)
	if info.FirstOffset != 0 || info.LastOffset != 2 || info.MaxTimestamp != 1000 || info.Bytes != len(first) {
		t.Fatalf("first append info %+v", info)
	}
	// Two batches in one append, the second with a later timestamp.
	pair := append(makeBatch(1, 5, 900), makeBatch(2, 5, 2000)...)
	info = mustAppend(t, l, pair, 6)
	if info.FirstOffset != 3 || info.LastOffset != 5 || info.MaxTimestamp != 2000 || l.EndOffset() != 6 {
		t.Fatalf("pair append info %+v, end %d", info, l.EndOffset())
	}
	headers := splitRead(t, pair)
	if headers[0].BaseOffset != 3 || headers[1].BaseOffset != 4 || headers[0].LeaderEpoch != 6 || headers[1].LeaderEpoch != 6 {
		t.Fatalf("pair not stamped in place: %+v", headers)
	}
	if h, _ := batch.Parse(first); h.BaseOffset != 0 || h.LeaderEpoch != 4 {
		t.Fatalf("first batch stamped %d/%d", h.BaseOffset, h.LeaderEpoch)
	}

	all := append(append([]byte{}, first...), pair...)
	got, err := l.Read(0, l.EndOffset(), 1<<20, false)
	if err != nil || !bytes.Equal(got, all) {
		t.Fatalf("Read(0) = %d bytes, %v; want the %d stored bytes", len(got), err, len(all))
	}
	// An offset inside a batch returns from that batch's start.
	got, err = l.Read(4, l.EndOffset(), 1<<20, false)
	if err != nil || !bytes.Equal(got, pair[len(pair)-len(makeBatch(2, 5, 2000)):]) {
		t.Fatalf("Read(4) returned %d bytes, %v", len(got), err)
	}
	got, _ = l.Read(1, l.EndOffset(), 1<<20, false)
	if !bytes.Equal(got, all) {
		t.Fatalf("Read(1) must start at the batch holding offset 1")
	}
	// maxOffset stops before a batch starting at or after it.
	got, _ = l.Read(0, 4, 1<<20, false)
	if !bytes.Equal(got, all[:len(first)+len(makeBatch(1, 5, 900))]) {
		t.Fatalf("Read(0, maxOffset 4) returned %d batches", len(splitRead(t, got)))
	}
	// maxBytes: whole batches only; KIP-74 lets the first one through.
	got, _ = l.Read(0, l.EndOffset(), len(first)+1, false)
	if !bytes.Equal(got, first) {
		t.Fatalf("Read with maxBytes just above one batch returned %d bytes", len(got))
	}
	got, _ = l.Read(0, l.EndOffset(), 1, false)
	if len(got) != 0 {
		t.Fatalf("Read with maxBytes 1 and atLeastOne false returned %d bytes", len(got))
	}
	got, _ = l.Read(0, l.EndOffset(), 1, true)
	if !bytes.Equal(got, first) {
		t.Fatalf("Read with maxBytes 1 and atLeastOne returned %d bytes", len(got))
	}
	// The end offset reads as empty; beyond it is out of range.
	if got, err := l.Read(6, 100, 100, true); err != nil || len(got) != 0 {
		t.Fatalf("Read(end) = %d bytes, %v", len(got), err)
	}
	_, err = l.Read(7, 100, 100, true)
	expectError(t, err, log.ErrOffsetOutOfRange)
	_, err = l.Read(-1, 100, 100, true)
	expectError(t, err, log.ErrOffsetOutOfRange)

	if l.LatestEpoch() != 6 {
		t.Fatalf("latest epoch %d", l.LatestEpoch())
	}
	want := []log.EpochEntry{{Epoch: 4, StartOffset: 0}, {Epoch: 6, StartOffset: 3}}
	if got := l.EpochEntries(); !equalEntries(got, want) {
		t.Fatalf("epochs %v, want %v", got, want)
	}
}

func TestAppendRefusesBadInput(t *testing.T) {
	h := newHarness(t, 1, simdisk.Faults{})
	l := h.open(log.DefaultConfig())
	mustAppend(t, l, makeBatch(1, 1, 1), 3)

	_, err := l.Append(nil, 3)
	expectError(t, err, log.ErrInvalidBatch)
	b := makeBatch(2, 4, 1)
	_, err = l.Append(b[:len(b)-1], 3)
	expectError(t, err, log.ErrInvalidBatch)
	corrupt := makeBatch(2, 4, 1)
	corrupt[len(corrupt)-1] ^= 1
	_, err = l.Append(corrupt, 3)
	expectError(t, err, log.ErrInvalidBatch)
	_, err = l.Append(makeBatch(1, 1, 1), 2)
	expectError(t, err, log.ErrEpochWentBack)
	_, err = l.Append(makeBatch(1, 1, 1), -1)
	expectError(t, err, log.ErrInvalidBatch)
	if l.EndOffset() != 1 {
		t.Fatalf("refused appends changed the end to %d", l.EndOffset())
	}
}

func TestAppendReplicatedKeepsOffsetsAndEpochs(t *testing.T) {
	h := newHarness(t, 1, simdisk.Faults{})
	l := h.open(log.DefaultConfig())

	buffer := append(replicatedBatch(0, 1, 2, 3, 10), replicatedBatch(2, 3, 1, 3, 11)...)
	info, err := l.AppendReplicated(buffer)
	if err != nil || info.FirstOffset != 0 || info.LastOffset != 2 {
		t.Fatalf("AppendReplicated: %+v, %v", info, err)
	}
	// A batch below the end, batches overlapping inside one append, and an
	// epoch going back are all refused.
	_, err = l.AppendReplicated(replicatedBatch(2, 3, 1, 1, 1))
	expectError(t, err, log.ErrUnexpectedOffset)
	_, err = l.AppendReplicated(append(replicatedBatch(3, 3, 2, 1, 1), replicatedBatch(4, 3, 1, 1, 1)...))
	expectError(t, err, log.ErrUnexpectedOffset)
	_, err = l.AppendReplicated(replicatedBatch(3, 2, 1, 1, 1))
	expectError(t, err, log.ErrEpochWentBack)
	want := []log.EpochEntry{{Epoch: 1, StartOffset: 0}, {Epoch: 3, StartOffset: 2}}
	if got := l.EpochEntries(); !equalEntries(got, want) || l.EndOffset() != 3 {
		t.Fatalf("epochs %v end %d, want %v end 3", got, l.EndOffset(), want)
	}
	if got := readAll(t, l); !bytes.Equal(bytes.Join(got, nil), buffer) {
		t.Fatalf("replicated bytes not stored as they came")
	}
}

func equalEntries(a, b []log.EpochEntry) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestReadAnswersOutliveLaterReads: Read reuses one buffer for the file
// reads of small answers and copies each answer out of it, and serves big
// answers from buffers of their own. Either way an answer a caller keeps
// stays as it was through later reads and appends, and writing past its
// end (appending to it) changes nothing the log serves later.
func TestReadAnswersOutliveLaterReads(t *testing.T) {
	h := newHarness(t, 1, simdisk.Faults{})
	l := h.open(log.DefaultConfig())
	var stored [][]byte // every batch as the log stamped it
	appendBatches := func(count, valueBytes int) {
		for i := range count {
			b := makeBatch(1+i%3, valueBytes+i, int64(len(stored)))
			mustAppend(t, l, b, 1)
			stored = append(stored, b)
		}
	}
	type answer struct {
		got  []byte
		want []byte
	}
	var kept []answer
	// keep reads from the start of stored[from] with maxBytes, expecting
	// stored[from:to], and keeps the answer.
	keep := func(from, to int, maxBytes int) {
		h, err := batch.Parse(stored[from])
		if err != nil {
			t.Fatalf("stored batch: %v", err)
		}
		got, err := l.Read(h.BaseOffset, l.EndOffset(), maxBytes, true)
		if err != nil {
			t.Fatalf("Read(%d): %v", h.BaseOffset, err)
		}
		kept = append(kept, answer{got: got, want: bytes.Join(stored[from:to], nil)})
		// Whatever a caller appends to an answer must not reach the log's
		// buffers.
		_ = append(got, bytes.Repeat([]byte{0xff}, 64)...)
	}

	appendBatches(40, 20)
	for i := range stored {
		keep(i, i+1, 1) // a lone batch: maxBytes 1, atLeastOne
	}
	appendBatches(20, 50)
	keep(0, len(stored), 1<<20) // small enough for the reused buffer
	appendBatches(20, 64<<10)   // about 1.3 MiB more: a read bigger than the reused buffer
	keep(0, len(stored), 4<<20)
	appendBatches(5, 10)
	keep(0, len(stored), 8<<20)

	for i, a := range kept {
		if !bytes.Equal(a.got, a.want) {
			t.Fatalf("answer %d (%d bytes) changed after later reads: now %d bytes, first batch %s", i, len(a.want), len(a.got), describe(a.got))
		}
	}
}
