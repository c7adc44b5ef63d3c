package log_test

import (
	"bytes"
	"errors"
	"testing"
	"time"

	"pgregory.net/rapid"

	"sluice/core/batch"
	"sluice/core/log"
	"sluice/sim/simdisk"
)

// modelBatch is one stored batch as the model remembers it.
type modelBatch struct {
	base, last int64
	epoch      int32
	bytes      []byte
}

// modelLog is the deliberately dumb model: a slice of batches and a start.
type modelLog struct {
	start, end int64
	batches    []modelBatch // dense from the first stored batch
}

func (m modelLog) clone() modelLog {
	m.batches = append([]modelBatch(nil), m.batches...)
	return m
}

// visible are the batches a reader can reach: those ending at or after start.
func (m modelLog) visible() []modelBatch {
	for i, b := range m.batches {
		if b.last >= m.start {
			return m.batches[i:]
		}
	}
	return nil
}

// holding returns the index of the batch holding offset, or -1.
func (m modelLog) holding(offset int64) int {
	for i, b := range m.batches {
		if b.base <= offset && offset <= b.last {
			return i
		}
	}
	return -1
}

func (m *modelLog) add(b []byte) {
	h, err := batch.Parse(b)
	if err != nil || h.BaseOffset != m.end {
		panic("model: appended batch does not continue the log")
	}
	m.batches = append(m.batches, modelBatch{base: h.BaseOffset, last: h.LastOffset(), epoch: h.LeaderEpoch, bytes: append([]byte(nil), b...)})
	m.end = h.NextOffset()
}

// epochs are the leader epoch entries the model expects: each change of
// epoch among the visible batches, the first one starting at most at start.
func (m modelLog) epochs() []log.EpochEntry {
	var entries []log.EpochEntry
	for _, b := range m.visible() {
		if len(entries) == 0 || entries[len(entries)-1].Epoch != b.epoch {
			entries = append(entries, log.EpochEntry{Epoch: b.epoch, StartOffset: max(b.base, m.start)})
		}
	}
	return entries
}

type logMachine struct {
	h      *harness
	config log.Config
	l      *log.Log
	model  modelLog

	// candidates are the states the log has been in since everything was
	// last durable: what a crash may bring back a prefix of.
	candidates []modelLog
	// startDurable is the start offset when everything was last durable.
	startDurable int64
	now          int64 // timestamps near the clock, for retention by age
}

func (s *logMachine) changed() { s.candidates = append(s.candidates, s.model.clone()) }

func (s *logMachine) durable() {
	s.candidates = []modelLog{s.model.clone()}
	s.startDurable = s.model.start
}

func (s *logMachine) randomBatches(t *rapid.T, first int64, epoch int32, stamp bool) []byte {
	var all []byte
	offset := first
	for range rapid.IntRange(1, 3).Draw(t, "batches") {
		records := rapid.IntRange(1, 4).Draw(t, "records")
		size := rapid.IntRange(0, 150).Draw(t, "valueBytes")
		timestamp := s.h.nowMilliseconds() + rapid.Int64Range(-5000, 5000).Draw(t, "timestampSkew")
		b := makeBatch(records, size, timestamp)
		if stamp {
			batch.SetBaseOffset(b, offset)
			batch.SetLeaderEpoch(b, epoch)
		}
		offset += int64(records)
		all = append(all, b...)
	}
	return all
}

func (s *logMachine) recordAppend(b []byte) {
	for sc := (batch.Scanner{Buf: b}); sc.Next(); {
		s.model.add(sc.Batch())
	}
	s.changed()
}

func (s *logMachine) Append(t *rapid.T) {
	epoch := max(s.l.LatestEpoch(), 0) + int32(rapid.IntRange(0, 1).Draw(t, "newEpoch"))
	b := s.randomBatches(t, 0, 0, false)
	info, err := s.l.Append(b, epoch)
	if errors.Is(err, log.ErrTruncationNotDurable) {
		return
	}
	if err != nil {
		t.Fatalf("Append: %v", err)
	}
	if info.FirstOffset != s.model.end {
		t.Fatalf("appended at %d, model end %d", info.FirstOffset, s.model.end)
	}
	s.recordAppend(b)
}

func (s *logMachine) AppendReplicated(t *rapid.T) {
	epoch := max(s.l.LatestEpoch(), 0) + int32(rapid.IntRange(0, 2).Draw(t, "epochStep"))
	b := s.randomBatches(t, s.model.end, epoch, true)
	if _, err := s.l.AppendReplicated(b); errors.Is(err, log.ErrTruncationNotDurable) {
		return
	} else if err != nil {
		t.Fatalf("AppendReplicated: %v", err)
	}
	s.recordAppend(b)
}

func (s *logMachine) Read(t *rapid.T) {
	m := s.model
	offset := rapid.Int64Range(m.start-2, m.end+2).Draw(t, "offset")
	maxOffset := rapid.Int64Range(offset-1, m.end+3).Draw(t, "maxOffset")
	maxBytes := rapid.IntRange(0, 800).Draw(t, "maxBytes")
	atLeastOne := rapid.Bool().Draw(t, "atLeastOne")
	got, err := s.l.Read(offset, maxOffset, maxBytes, atLeastOne)
	if offset < m.start || offset > m.end {
		if !errors.Is(err, log.ErrOffsetOutOfRange) {
			t.Fatalf("Read(%d) outside [%d, %d]: %v", offset, m.start, m.end, err)
		}
		return
	}
	if err != nil {
		t.Fatalf("Read(%d): %v", offset, err)
	}
	if offset == m.end || offset >= maxOffset {
		if len(got) != 0 {
			t.Fatalf("Read(%d, max %d) at the end returned %d bytes", offset, maxOffset, len(got))
		}
		return
	}
	i := m.holding(offset)
	headers := splitRead(t, got)
	position := 0
	for j, h := range headers {
		want := m.batches[i+j]
		if !bytes.Equal(got[position:position+h.Size()], want.bytes) {
			t.Fatalf("Read(%d) batch %d is %s, want %s", offset, j, describe(got[position:]), describe(want.bytes))
		}
		if h.BaseOffset >= maxOffset {
			t.Fatalf("Read(%d, maxOffset %d) returned a batch at %d", offset, maxOffset, h.BaseOffset)
		}
		position += h.Size()
	}
	if len(got) > maxBytes && !(atLeastOne && len(headers) == 1) {
		t.Fatalf("Read returned %d bytes, max %d", len(got), maxBytes)
	}
	if len(headers) == 0 && (atLeastOne || len(m.batches[i].bytes) <= maxBytes) {
		t.Fatalf("Read(%d, max %d bytes, atLeastOne %v) returned nothing", offset, maxBytes, atLeastOne)
	}
}

func (s *logMachine) Truncate(t *rapid.T) {
	m := &s.model
	offset := rapid.Int64Range(m.start-1, m.end+1).Draw(t, "truncateTo")
	err := s.l.TruncateTo(offset)
	switch {
	case offset < m.start:
		if !errors.Is(err, log.ErrOffsetOutOfRange) {
			t.Fatalf("TruncateTo(%d) below start %d: %v", offset, m.start, err)
		}
		return
	case err != nil:
		t.Fatalf("TruncateTo(%d): %v", offset, err)
	case offset >= m.end:
		return
	}
	i := m.holding(offset)
	if m.batches[i].base < m.start {
		m.batches, m.end = nil, m.start
	} else {
		m.end = m.batches[i].base
		m.batches = m.batches[:i]
	}
	s.changed()
}

func (s *logMachine) AdvanceStart(t *rapid.T) {
	m := &s.model
	offset := rapid.Int64Range(m.start-1, m.end+1).Draw(t, "start")
	err := s.l.AdvanceStartOffset(offset)
	if offset > m.end {
		if !errors.Is(err, log.ErrOffsetOutOfRange) {
			t.Fatalf("AdvanceStartOffset(%d) past end %d: %v", offset, m.end, err)
		}
		return
	}
	if err != nil {
		t.Fatalf("AdvanceStartOffset(%d): %v", offset, err)
	}
	m.start = max(m.start, offset)
	s.changed()
}

func (s *logMachine) Retention(t *rapid.T) {
	config := s.config
	config.RetentionBytes = rapid.Int64Range(-1, s.l.Size()).Draw(t, "retentionBytes")
	config.RetentionAge = log.Unlimited
	if rapid.Bool().Draw(t, "byAge") {
		config.RetentionAge = time.Duration(rapid.IntRange(0, 20).Draw(t, "retentionSeconds")) * time.Second
	}
	if err := s.l.SetConfig(config); err != nil {
		t.Fatal(err)
	}
	s.l.ApplyRetention(s.l.EndOffset())
	s.l.SetConfig(s.config)
	start := s.l.StartOffset()
	if start < s.model.start || (start != s.model.start && start != s.model.end && s.model.batches[s.model.holding(start)].base != start) {
		t.Fatalf("retention moved the start from %d to %d, not a batch boundary", s.model.start, start)
	}
	if start != s.model.start {
		s.model.start = start
		s.changed()
	}
}

func (s *logMachine) Sync(t *rapid.T) {
	s.l.Sync()
	s.h.drain()
	if s.l.SyncedOffset() != s.model.end {
		t.Fatalf("after a full sync, synced %d, end %d", s.l.SyncedOffset(), s.model.end)
	}
	s.durable()
}

func (s *logMachine) SyncPartly(t *rapid.T) {
	s.l.Sync()
	for range rapid.IntRange(0, 3).Draw(t, "steps") {
		s.h.kernel.Step()
	}
}

func (s *logMachine) PassTime(t *rapid.T) {
	s.h.advance(time.Duration(rapid.IntRange(0, 20_000).Draw(t, "milliseconds")) * time.Millisecond)
}

func (s *logMachine) Reopen(t *rapid.T) {
	s.l.Sync()
	s.h.drain()
	s.l.Close()
	s.l = s.h.open(s.config)
	s.durable()
}

func (s *logMachine) Crash(t *rapid.T) {
	synced := s.l.SyncedOffset()
	torn := rapid.Float64Range(0, 1).Draw(t, "tornWrite")
	s.h.disk.SetFaults(simdisk.Faults{TornWrite: torn})
	s.h.crash()
	s.h.disk.SetFaults(simdisk.Faults{})
	s.l = s.h.open(s.config)

	start, end := s.l.StartOffset(), s.l.EndOffset()
	if start < s.startDurable || start > s.model.start {
		t.Fatalf("recovered start %d outside [%d, %d]", start, s.startDurable, s.model.start)
	}
	recovered := readAll(t, s.l)
	// Every synced batch survives, byte for byte.
	for _, b := range s.model.visible() {
		if b.last >= synced || b.last < start || b.last < s.model.start {
			continue
		}
		found := false
		for _, r := range recovered {
			if bytes.Equal(r, b.bytes) {
				found = true
			}
		}
		if !found {
			t.Fatalf("synced batch %s (synced %d) lost in the crash", describe(b.bytes), synced)
		}
	}
	// Nothing comes back but a prefix of a state since the last full sync.
	consistent := len(recovered) == 0 && start == end
	for _, c := range s.candidates {
		c.start = start
		visible := c.visible()
		if len(recovered) > 0 && len(recovered) <= len(visible) {
			same := true
			for i := range recovered {
				same = same && bytes.Equal(recovered[i], visible[i].bytes)
			}
			consistent = consistent || same
		}
	}
	if !consistent {
		t.Fatalf("recovered %d batches [%d, %d) that are no prefix of the %d states since the last sync", len(recovered), start, end, len(s.candidates))
	}
	s.model = modelLog{start: start, end: start}
	for _, r := range recovered {
		if len(s.model.batches) == 0 {
			s.model.end = batchFirstOffset(r)
		}
		s.model.add(r)
	}
	s.durable()
}

// Check runs after every action.
func (s *logMachine) Check(t *rapid.T) {
	m := s.model
	if s.l.StartOffset() != m.start || s.l.EndOffset() != m.end {
		t.Fatalf("log [%d, %d), model [%d, %d)", s.l.StartOffset(), s.l.EndOffset(), m.start, m.end)
	}
	if s.l.SyncedOffset() > m.end {
		t.Fatalf("synced %d above end %d", s.l.SyncedOffset(), m.end)
	}
	want, got := m.epochs(), s.l.EpochEntries()
	// With no batch at or after the start, Kafka keeps the epoch in force
	// there with its start moved to the end; a crash may forget it.
	if !equalEntries(got, want) && !(len(want) == 0 && len(got) == 1 && got[0].StartOffset == m.end) {
		t.Fatalf("epochs %v, model %v", got, want)
	}
	if len(want) > 0 && s.l.LatestEpoch() != want[len(want)-1].Epoch {
		t.Fatalf("latest epoch %d, model %d", s.l.LatestEpoch(), want[len(want)-1].Epoch)
	}
	all := readAll(t, s.l)
	visible := m.visible()
	if len(all) != len(visible) {
		t.Fatalf("log holds %d batches, model %d", len(all), len(visible))
	}
	for i := range all {
		if !bytes.Equal(all[i], visible[i].bytes) {
			t.Fatalf("batch %d is %s, model %s", i, describe(all[i]), describe(visible[i].bytes))
		}
	}
}

func TestLogAgainstModel(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		h := newHarness(t, rapid.Uint64().Draw(t, "seed"), simdisk.Faults{})
		config := log.DefaultConfig()
		config.SegmentBytes = rapid.Int64Range(log.SegmentBytesMin, 3000).Draw(t, "segmentBytes")
		config.IndexIntervalBytes = rapid.IntRange(0, 600).Draw(t, "indexIntervalBytes")
		config.SegmentAge = time.Duration(rapid.IntRange(1, 60).Draw(t, "segmentAgeSeconds")) * time.Second
		config.RetentionAge = log.Unlimited
		s := &logMachine{h: h, config: config}
		s.l = h.open(config)
		s.durable()
		t.Repeat(map[string]func(*rapid.T){
			"":                 s.Check,
			"append":           s.Append,
			"appendReplicated": s.AppendReplicated,
			"read":             s.Read,
			"truncate":         s.Truncate,
			"advanceStart":     s.AdvanceStart,
			"retention":        s.Retention,
			"sync":             s.Sync,
			"syncPartly":       s.SyncPartly,
			"passTime":         s.PassTime,
			"reopen":           s.Reopen,
			"crash":            s.Crash,
		})
	})
}
