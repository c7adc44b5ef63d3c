package logworkload

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"strconv"

	"sluice/core"
	"sluice/core/batch"
	"sluice/core/log"
)

// The operations a run draws step by step (workload.go's operate picks
// them): appends of random batches, reads checked against the model,
// truncations, restarts, moves of the log start, retention, and a disk
// filling up. Each returns the violation it found, if any.

func (r *run) toggleFullDisk() {
	faults := r.machine.Disk.Faults()
	r.fullDisk = !r.fullDisk
	faults.CapacityBytes = 0
	if r.fullDisk {
		r.counts.fullDiskWindows++
		faults.CapacityBytes = r.machine.Disk.Usage() + r.rng.Int64N(fullDiskHeadroomMax)
	}
	r.machine.Disk.SetFaults(faults)
	r.note("capacity " + strconv.FormatInt(faults.CapacityBytes, 10))
	if r.fullDisk {
		r.recording.FaultStart(r.now(), "full-disk-"+nodeName, []string{nodeName}, "disk full at "+strconv.FormatInt(faults.CapacityBytes, 10)+" bytes")
	} else {
		r.recording.FaultEnd(r.now(), "full-disk-"+nodeName)
	}
}

// randomBatches builds one to a few batches with random records.
func (r *run) randomBatches(firstOffset int64, epoch int32, stamped bool) []byte {
	var all []byte
	offset := firstOffset
	now := r.machine.Clock.Now().UnixMilli()
	for range 1 + r.rng.IntN(batchesPerAppendMax) {
		spec := batch.Spec{
			BaseTimestamp: now + r.rng.Int64N(2*timestampSkewMax+1) - timestampSkewMax,
			ProducerID:    batch.NoProducerID,
		}
		for i := range 1 + r.rng.IntN(recordsPerBatchMax) {
			value := randomBytes(r.rng.Uint64(), r.rng.IntN(recordValueBytesMax+1))
			record := batch.Record{Value: value, TimestampDelta: int64(i)}
			if r.settings.compaction.on {
				r.settings.compaction.keyRecord(r.rng, &record)
			}
			spec.Records = append(spec.Records, record)
		}
		if stamped {
			spec.BaseOffset, spec.LeaderEpoch = offset, epoch
		}
		offset += int64(len(spec.Records))
		all = append(all, r.settings.compression.maybeCompress(r.rng, r.codecs, batch.Build(spec))...)
	}
	return all
}

func (r *run) appendBatches() *violation {
	epoch := max(r.log.LatestEpoch(), 0)
	if r.rng.Float64() < epochBumpChance {
		epoch++
	}
	replicated := r.rng.Float64() < replicatedAppendChance
	batches := r.randomBatches(r.model.end, epoch, replicated)
	var info log.AppendInfo
	var err error
	if replicated {
		info, err = r.log.AppendReplicated(batches)
	} else {
		info, err = r.log.Append(batches, epoch)
	}
	if errors.Is(err, log.ErrTruncationNotDurable) || errors.Is(err, core.ErrDiskFull) || errors.Is(err, log.ErrHalted) {
		r.counts.appendsRefused++
		r.note("append refused: " + err.Error())
		r.notePossibleCut() // a partial write is cut back
		return nil
	}
	if err != nil {
		return &violation{"offsets", "append failed: " + err.Error()}
	}
	if info.FirstOffset != r.model.end {
		return &violation{"offsets", fmt.Sprintf("append got offset %d, the log ended at %d", info.FirstOffset, r.model.end)}
	}
	r.counts.appends++
	r.model.next()
	for s := (batch.Scanner{Buf: batches}); s.Next(); {
		r.model.appendBatch(s.Batch())
	}
	if info.LastOffset != r.model.end-1 || r.log.EndOffset() != r.model.end {
		return &violation{"offsets", fmt.Sprintf("append of [%d, %d] left the end at %d, model %d", info.FirstOffset, info.LastOffset, r.log.EndOffset(), r.model.end)}
	}
	r.note("append " + strconv.FormatInt(info.FirstOffset, 10) + "-" + strconv.FormatInt(info.LastOffset, 10))
	return nil
}

func (r *run) read() *violation {
	r.counts.reads++
	m := &r.model
	offset := m.start - 1 + r.rng.Int64N(m.end-m.start+3)
	maxOffset := m.end
	if r.rng.IntN(4) == 0 {
		maxOffset = offset + r.rng.Int64N(m.end-offset+2)
	}
	maxBytes := r.rng.IntN(readMaxBytesMax)
	atLeastOne := r.rng.IntN(4) != 0
	got, err := r.log.Read(offset, maxOffset, maxBytes, atLeastOne)
	if offset < m.start || offset > m.end {
		if !errors.Is(err, log.ErrOffsetOutOfRange) {
			return &violation{"read-mismatch", fmt.Sprintf("Read(%d) outside [%d, %d] returned %v", offset, m.start, m.end, err)}
		}
		return nil
	}
	if err != nil {
		return &violation{"read-failed", fmt.Sprintf("Read(%d): %v", offset, err)}
	}
	if offset == m.end || offset >= maxOffset {
		if len(got) != 0 {
			return &violation{"read-mismatch", fmt.Sprintf("Read(%d, max offset %d) returned %d bytes", offset, maxOffset, len(got))}
		}
		return nil
	}
	if r.settings.compaction.on {
		return r.checkReadCompacted(offset, maxOffset, maxBytes, atLeastOne, got)
	}
	return r.checkRead(offset, maxOffset, maxBytes, atLeastOne, got)
}

// checkRead compares a read's bytes with the model's batches.
func (r *run) checkRead(offset, maxOffset int64, maxBytes int, atLeastOne bool, got []byte) *violation {
	m := &r.model
	i := m.holding(offset)
	s := batch.Scanner{Buf: got, VerifyCRC: true}
	count := 0
	for ; s.Next(); count++ {
		if i+count >= len(m.batches) {
			return &violation{"read-mismatch", fmt.Sprintf("Read(%d) returned more batches than the log holds", offset)}
		}
		want := m.batches[i+count]
		if !bytes.Equal(s.Batch(), want.bytes) {
			return &violation{"read-mismatch", fmt.Sprintf("Read(%d) batch %d differs from the one stored at %d", offset, count, want.base)}
		}
		if want.base >= maxOffset {
			return &violation{"read-mismatch", fmt.Sprintf("Read(%d, max offset %d) returned the batch at %d", offset, maxOffset, want.base)}
		}
	}
	if s.Err() != nil {
		check := "read-mismatch"
		if errors.Is(s.Err(), batch.ErrCRC) {
			check = "corrupt-served"
		}
		return &violation{check, fmt.Sprintf("Read(%d) returned bad bytes: %v", offset, s.Err())}
	}
	if len(got) > maxBytes && !(atLeastOne && count == 1) {
		return &violation{"read-mismatch", fmt.Sprintf("Read(%d) returned %d bytes, max %d", offset, len(got), maxBytes)}
	}
	if count == 0 && (atLeastOne || len(m.batches[i].bytes) <= maxBytes) {
		return &violation{"read-mismatch", fmt.Sprintf("Read(%d) returned nothing", offset)}
	}
	return nil
}

func (r *run) truncate() *violation {
	m := &r.model
	offset := m.start + r.rng.Int64N(m.end-m.start+1)
	r.note("truncate " + strconv.FormatInt(offset, 10))
	if offset < m.end {
		// A cut voids the last restart's promise, even one that halts
		// the log half done.
		r.promise = nil
	}
	if err := r.log.TruncateTo(offset); err != nil {
		if r.halted {
			return nil
		}
		return &violation{"offsets", fmt.Sprintf("TruncateTo(%d): %v", offset, err)}
	}
	if offset >= m.end {
		return nil
	}
	r.counts.truncations++
	r.notePossibleCut()
	m.next()
	m.truncate(offset)
	if r.log.EndOffset() != m.end || r.log.StartOffset() != m.start {
		return &violation{"offsets", fmt.Sprintf("after TruncateTo(%d) the log is [%d, %d), model [%d, %d)", offset, r.log.StartOffset(), r.log.EndOffset(), m.start, m.end)}
	}
	return nil
}

// restart empties the log and starts it again at an offset
// (TruncateFullyAndStartAt), as a follower does when its leader's log
// starts past its end, or when it must cut below its own log start after
// an unclean election: half the time where one of its batches begins,
// often a live segment's base, whose file name the new segment takes;
// otherwise anywhere up to a little past the end. In a compaction seed
// only at or above what compaction may have used, as its truncations.
func (r *run) restart() *violation {
	m := &r.model
	low := int64(0)
	if r.settings.compaction.on {
		low = min(r.compactedBelow, m.end)
	}
	offset := low + r.rng.Int64N(m.end+restartBeyondEndMax+1-low)
	if above := m.batchesFrom(low); len(above) > 0 && r.rng.IntN(2) == 0 {
		offset = above[r.rng.IntN(len(above))].base
	}
	r.note("restart at " + strconv.FormatInt(offset, 10))
	promise, earlier := r.promiseAtRestart(offset), r.promise
	// An earlier restart's promise is void from here, even if this one
	// halts the log half done: this one may cut what that one kept.
	r.promise = nil
	if err := r.log.TruncateFullyAndStartAt(offset); err != nil {
		if r.halted {
			return nil
		}
		refused := errors.Is(err, log.ErrTruncationNotDurable) && r.mayRefuseRestart() ||
			errors.Is(err, log.ErrSwapNotFinished) && r.maySwapBeUnfinished()
		if refused {
			// Refused before it touched anything: the earlier promise
			// stands.
			if errors.Is(err, log.ErrSwapNotFinished) {
				r.note("restart refused: a compaction swap is not finished")
			} else {
				r.note("restart refused: a cut is not yet durable")
			}
			r.counts.restartsRefused++
			r.promise = earlier
			return nil
		}
		return &violation{"offsets", fmt.Sprintf("TruncateFullyAndStartAt(%d): %v", offset, err)}
	}
	r.counts.restarts++
	r.notePossibleCut()
	r.promise = promise
	m.next()
	m.restart(offset)
	if r.log.StartOffset() != offset || r.log.EndOffset() != offset {
		return &violation{"offsets", fmt.Sprintf("after TruncateFullyAndStartAt(%d) the log is [%d, %d)", offset, r.log.StartOffset(), r.log.EndOffset())}
	}
	return nil
}

// restartBeyondEndMax is how far past the end a restart may start the log.
const restartBeyondEndMax = 50

func (r *run) advanceStart() *violation {
	m := &r.model
	// Mostly small steps: DeleteRecords trims the front, not the whole log.
	offset := m.start + r.rng.Int64N((m.end-m.start)/4+1)
	r.note("advance start " + strconv.FormatInt(offset, 10))
	if err := r.log.AdvanceStartOffset(offset); err != nil {
		return &violation{"offsets", fmt.Sprintf("AdvanceStartOffset(%d): %v", offset, err)}
	}
	if offset > m.start {
		r.counts.startMoves++
		m.next()
		m.advanceStart(offset)
	}
	return nil
}

func (r *run) retention() *violation {
	r.counts.retentions++
	deleted := r.log.ApplyRetention(r.log.EndOffset())
	start := r.log.StartOffset()
	r.note("retention " + strconv.Itoa(deleted) + " start " + strconv.FormatInt(start, 10))
	m := &r.model
	if start < m.start || start > m.end {
		return &violation{"offsets", fmt.Sprintf("retention moved the start from %d to %d (end %d)", m.start, start, m.end)}
	}
	if start != m.start {
		// A segment starts at a batch, or, once compaction removed
		// that batch, in the gap it left.
		i := m.holding(start)
		inGap := i < 0 && r.settings.compaction.on
		if start != m.end && !inGap && (i < 0 || m.batches[i].base != start) {
			return &violation{"offsets", fmt.Sprintf("retention moved the start to %d, inside a batch", start)}
		}
		if v := r.checkRetentionEarned(start); v != nil {
			return v
		}
		m.next()
		m.advanceStart(start)
	}
	return nil
}

// checkRetentionEarned checks, before the model follows it, that a move of
// the start to start by retention was earned ("retention-too-eager"). The
// last segment removed, which ends at start, went because the log without
// it still held retention.bytes, or because its largest timestamp was
// older than retention.ms; its last batch is the last below start, whose
// timestamp is at most the segment's. Without compaction the log from
// start on is the model's batches from start on, byte for byte.
func (r *run) checkRetentionEarned(start int64) *violation {
	if r.settings.compaction.on {
		return nil // sizes on disk are no longer the batches appended
	}
	m := &r.model
	config := r.settings.config
	remaining := int64(0)
	var lastRemoved *modelBatch
	for i := range m.batches {
		switch b := &m.batches[i]; {
		case b.base >= start:
			remaining += int64(len(b.bytes))
		case b.last >= m.start:
			lastRemoved = b
		}
	}
	if lastRemoved == nil || config.RetentionBytes != log.Unlimited && remaining >= config.RetentionBytes {
		return nil
	}
	h, _ := batch.Parse(lastRemoved.bytes)
	age := r.machine.Clock.Now().UnixMilli() - h.MaxTimestamp
	if config.RetentionAge != log.Unlimited && age > config.RetentionAge.Milliseconds() {
		return nil
	}
	return &violation{"retention-too-eager", fmt.Sprintf("retention moved the start from %d to %d, leaving %d bytes (retention.bytes %d), and the batch at %d below it is %d ms old (retention.ms %d)",
		m.start, start, remaining, config.RetentionBytes, lastRemoved.base, age, config.RetentionAge.Milliseconds())}
}

// randomBytes returns n bytes of xorshift output from seed: as good as the
// run's PRNG for telling batches apart, at a fraction of its cost.
func randomBytes(seed uint64, n int) []byte {
	b := make([]byte, n)
	x := seed | 1
	for i := 0; i < n; i += 8 {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		var word [8]byte
		binary.LittleEndian.PutUint64(word[:], x)
		copy(b[i:], word[:])
	}
	return b
}
