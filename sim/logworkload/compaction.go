package logworkload

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"time"

	"sluice/core"
	"sluice/core/batch"
	"sluice/core/log"
	"sluice/sim/kernel"
)

// Compaction seeds. One seed in compactionSeedsShare writes keyed records
// (tombstones among them) and now and then runs a step of log compaction
// (Log.Compact) with UpTo at the synced offset, as a replica would at its
// high watermark. The model keeps every batch as appended; the log must
// then hold a compaction of it:
//   - "compaction-mangled": a batch the log serves is not one the model
//     holds with some of its records removed (same offsets, epoch and
//     producer fields; each remaining record byte for byte), or batches
//     come out of order, or a batch at or above the highest UpTo
//     compaction was given (which it may not touch) is changed or missing;
//   - "compaction-lost": the latest record of a key is gone;
//   - "tombstone-resurrected": a key's latest record, a tombstone, is gone
//     but an older record of that key is still there.
//
// Truncations stay at or above the highest UpTo, as a follower's never go
// below the high watermark.
//
// The settings come from their own PRNG stream, so seeds that do not
// compact run exactly as they did before compaction existed.

// compactionSettings is what a seed decides about compaction.
type compactionSettings struct {
	on bool
	// keys is how many distinct keys records use.
	keys int
	// tombstoneChance is the chance a record is a tombstone.
	tombstoneChance float64
	// compactChance is the chance, per operation, of a compaction step.
	compactChance float64
}

// Bounds of what a compaction seed may draw.
const (
	compactionSeedsShare     = 3
	compactionKeysDrawMin    = 2
	compactionKeysDrawMax    = 40
	tombstoneChanceDrawMax   = 0.3
	compactChanceDrawMin     = 0.02
	compactChanceDrawMax     = 0.15
	deleteRetentionDrawMax   = 5 * time.Second
	minCompactionLagDrawMax  = 2 * time.Second
	minCompactionLagChance   = 0.3
	cleanableDirtyRatioMax   = 0.6
	compactionSettingsStream = "compaction-settings"
)

func drawCompactionSettings(seed uint64, config *log.Config) compactionSettings {
	rng := kernel.NewRand(seed, compactionSettingsStream)
	if rng.IntN(compactionSeedsShare) != 0 {
		return compactionSettings{}
	}
	s := compactionSettings{
		on:              true,
		keys:            compactionKeysDrawMin + rng.IntN(compactionKeysDrawMax-compactionKeysDrawMin+1),
		tombstoneChance: rng.Float64() * tombstoneChanceDrawMax,
		compactChance:   compactChanceDrawMin + rng.Float64()*(compactChanceDrawMax-compactChanceDrawMin),
	}
	// As a replica of a cleanup.policy=compact topic configures it.
	config.Compacted = true
	config.DeleteRetention = time.Duration(rng.Int64N(int64(deleteRetentionDrawMax)))
	config.MinCompactionLag = 0
	if rng.Float64() < minCompactionLagChance {
		config.MinCompactionLag = time.Duration(rng.Int64N(int64(minCompactionLagDrawMax)))
	}
	config.MinCleanableDirtyRatio = rng.Float64() * cleanableDirtyRatioMax
	return s
}

// keyRecord gives a record of a compaction seed its key, and makes it a
// tombstone at the seed's chance.
func (s compactionSettings) keyRecord(rng *rand.Rand, r *batch.Record) {
	r.Key = []byte("k" + strconv.Itoa(rng.IntN(s.keys)))
	if rng.Float64() < s.tombstoneChance {
		r.Value = nil
	}
}

// compact runs one compaction step up to the synced offset.
func (r *run) compact() *violation {
	upTo := r.log.SyncedOffset()
	result, err := r.log.Compact(log.CompactOptions{UpTo: upTo})
	r.counts.compactions++
	r.swapRounds = r.log.SyncStats().RoundsStarted
	// Even a failed step may have compacted some groups before failing.
	r.compactedBelow = max(r.compactedBelow, upTo)
	if err != nil {
		if r.halted || r.fullDisk || errors.Is(err, core.ErrDiskFull) || errors.Is(err, log.ErrHalted) {
			r.note("compaction step failed: " + err.Error())
			return nil
		}
		return &violation{"compaction-failed", err.Error()}
	}
	r.counts.segmentsCompacted += result.SegmentsRewritten
	r.counts.recordsCompacted += int(result.RecordsRemoved)
	r.counts.tombstonesCompacted += int(result.TombstonesRemoved)
	if result.SegmentsRewritten > 0 || result.PassFinished {
		r.note(fmt.Sprintf("compacted up to %d: %d segments, %d records, %d tombstones", upTo,
			result.SegmentsRewritten, result.RecordsRemoved, result.TombstonesRemoved))
	}
	return r.checkKeysNow()
}

// checkKeysNow reads the whole log and checks what compaction promises
// per key, right after an operation that may have broken it.
func (r *run) checkKeysNow() *violation {
	if r.halted {
		return nil
	}
	all, v := r.readAll("read-failed")
	if v != nil {
		return v
	}
	if !compactedPrefix(r.codecs, all, r.model.batches, r.model.start, r.compactedBelow) {
		return &violation{"compaction-mangled", fmt.Sprintf("the log's %d batches are no compaction of the model's", len(all))}
	}
	return checkKeys(r.codecs, all, r.model.batches, r.model.start, r.model.end)
}

// truncateCompacted is truncate for a compaction seed: at or above what
// compaction may have used, and the log may end below the offset asked
// for, where compaction removed the batches before it.
func (r *run) truncateCompacted() *violation {
	m := &r.model
	low := max(r.compactedBelow, m.start)
	if low > m.end {
		return nil
	}
	offset := low + r.rng.Int64N(m.end-low+1)
	r.note("truncate " + strconv.FormatInt(offset, 10))
	if err := r.log.TruncateTo(offset); err != nil {
		if r.halted {
			return nil
		}
		return &violation{"offsets", fmt.Sprintf("TruncateTo(%d): %v", offset, err)}
	}
	if offset >= m.end {
		return nil
	}
	end := r.log.EndOffset()
	kept := 0
	for kept < len(m.batches) && m.batches[kept].last < end {
		kept++
	}
	boundary := end == m.start || (kept > 0 && m.batches[kept-1].last+1 == end) || (kept < len(m.batches) && m.batches[kept].base == end)
	if end > offset || !boundary {
		return &violation{"offsets", fmt.Sprintf("TruncateTo(%d) left the log ending at %d, not a batch boundary at or below it", offset, end)}
	}
	r.counts.truncations++
	r.notePossibleCut()
	m.next()
	m.cutAt(kept, end)
	// Records below the new end may only have been compacted because of
	// records below it too.
	r.compactedBelow = min(r.compactedBelow, end)
	return r.checkKeysNow()
}

// compactedMatch reports whether got is what compaction may make of want:
// the batch itself, or the same batch with some records removed.
func compactedMatch(codecs core.Codecs, got []byte, want modelBatch) bool {
	if bytes.Equal(got, want.bytes) {
		return true
	}
	g, err := batch.ValidateCompacted(got)
	if err != nil {
		return false
	}
	w, _ := batch.Parse(want.bytes)
	if g.BaseOffset != w.BaseOffset || g.LastOffsetDelta != w.LastOffsetDelta || g.LeaderEpoch != w.LeaderEpoch ||
		g.ProducerID != w.ProducerID || g.ProducerEpoch != w.ProducerEpoch || g.BaseSequence != w.BaseSequence {
		return false
	}
	gotRecords, err1 := rawRecords(codecs, got)
	wantRecords, err2 := rawRecords(codecs, want.bytes)
	if err1 != nil || err2 != nil {
		return false
	}
	j := 0
	for _, record := range gotRecords {
		for j < len(wantRecords) && wantRecords[j].OffsetDelta < record.OffsetDelta {
			j++
		}
		if j == len(wantRecords) || !bytes.Equal(wantRecords[j].Encoded, record.Encoded) {
			return false
		}
		j++
	}
	return true
}

// rawRecords splits a batch's records, decompressed if need be.
func rawRecords(codecs core.Codecs, b []byte) ([]batch.RawRecord, error) {
	h, err := batch.Parse(b)
	if err != nil {
		return nil, err
	}
	section, err := batch.RecordsSection(b)
	if err != nil {
		return nil, err
	}
	if h.Compression() != batch.CompressionNone {
		if section, err = codecs.Decompress(h.Compression(), section, recordsDecompressedBytesMax); err != nil {
			return nil, err
		}
	}
	return batch.SplitRecords(section, h.RecordCount)
}

// recordsDecompressedBytesMax bounds what the model decompresses of one
// batch: far above what randomBatches builds.
const recordsDecompressedBytesMax = 16 << 20

// compactedPrefix reports whether got, read from start, is a compaction of
// a prefix of the candidate's batches: each batch matches a candidate
// batch in order, and candidate batches are skipped, or changed, only
// below compactedBelow.
func compactedPrefix(codecs core.Codecs, got [][]byte, candidate []modelBatch, start, compactedBelow int64) bool {
	visible := visibleFrom(candidate, start)
	j := 0
	for _, b := range got {
		h, err := batch.Parse(b)
		if err != nil {
			return false
		}
		for j < len(visible) && visible[j].base < h.BaseOffset {
			if visible[j].last >= compactedBelow {
				return false // a batch compaction may not touch is missing
			}
			j++
		}
		if j == len(visible) || visible[j].base != h.BaseOffset || !compactedMatch(codecs, b, visible[j]) {
			return false
		}
		if visible[j].last >= compactedBelow && !bytes.Equal(b, visible[j].bytes) {
			return false
		}
		j++
	}
	return true
}

// checkKeys checks what compaction promises per key, for the model's
// records in [start, limit): each key's latest record is present in got,
// unless it is a tombstone, and then no older record of its key is.
func checkKeys(codecs core.Codecs, got [][]byte, model []modelBatch, start, limit int64) *violation {
	type keyed struct {
		offset    int64
		tombstone bool
	}
	latest := map[string]keyed{}
	var keys []string
	for _, b := range model {
		if b.last < start || b.base >= limit {
			continue
		}
		records, _ := rawRecords(codecs, b.bytes)
		for _, record := range records {
			offset := b.base + int64(record.OffsetDelta)
			if offset < start || offset >= limit {
				continue
			}
			if _, seen := latest[string(record.Key)]; !seen {
				keys = append(keys, string(record.Key))
			}
			latest[string(record.Key)] = keyed{offset: offset, tombstone: record.Value == nil}
		}
	}
	present := map[int64]bool{}
	oldest := map[string]int64{} // the lowest offset each key is present at
	for _, b := range got {
		h, _ := batch.Parse(b)
		records, _ := rawRecords(codecs, b)
		for _, record := range records {
			offset := h.BaseOffset + int64(record.OffsetDelta)
			if offset < start {
				continue
			}
			present[offset] = true
			if o, seen := oldest[string(record.Key)]; !seen || offset < o {
				oldest[string(record.Key)] = offset
			}
		}
	}
	for _, key := range keys {
		l := latest[key]
		if present[l.offset] {
			continue
		}
		if !l.tombstone {
			var all []int64
			for _, b := range model {
				records, _ := rawRecords(codecs, b.bytes)
				for _, record := range records {
					if string(record.Key) == key {
						all = append(all, b.base+int64(record.OffsetDelta))
					}
				}
			}
			return &violation{"compaction-lost", fmt.Sprintf("key %q: its latest record, at %d, is gone (model has it at %v)", key, l.offset, all)}
		}
		if o, seen := oldest[key]; seen && o < l.offset {
			return &violation{"tombstone-resurrected", fmt.Sprintf("key %q: its tombstone at %d is gone but its record at %d is still there", key, l.offset, o)}
		}
	}
	return nil
}

// checkReadCompacted is checkRead for a compaction seed: the batches must
// be a compaction of the model's from the one holding offset, none
// skipped that compaction may not remove.
func (r *run) checkReadCompacted(offset, maxOffset int64, maxBytes int, atLeastOne bool, got []byte) *violation {
	m := &r.model
	var batches [][]byte
	s := batch.Scanner{Buf: got, VerifyCRC: true}
	for s.Next() {
		if s.Header().BaseOffset >= maxOffset {
			return &violation{"read-mismatch", fmt.Sprintf("Read(%d, max offset %d) returned the batch at %d", offset, maxOffset, s.Header().BaseOffset)}
		}
		batches = append(batches, s.Batch())
	}
	if s.Err() != nil {
		check := "read-mismatch"
		if errors.Is(s.Err(), batch.ErrCRC) {
			check = "corrupt-served"
		}
		return &violation{check, fmt.Sprintf("Read(%d) returned bad bytes: %v", offset, s.Err())}
	}
	if !compactedPrefix(r.codecs, batches, m.batches, offset, r.compactedBelow) {
		return &violation{"compaction-mangled", fmt.Sprintf("Read(%d) returned %d batches that are no compaction of the log from there", offset, len(batches))}
	}
	if len(got) > maxBytes && !(atLeastOne && len(batches) == 1) {
		return &violation{"read-mismatch", fmt.Sprintf("Read(%d) returned %d bytes, max %d", offset, len(got), maxBytes)}
	}
	// The log's last batch ends at its end, so there is always a batch
	// holding offset or after it.
	if len(batches) == 0 && atLeastOne && maxOffset >= m.end {
		return &violation{"read-mismatch", fmt.Sprintf("Read(%d) returned nothing", offset)}
	}
	return nil
}

// checkEpochsCompacted is checkEpochs for a compaction seed. Once
// compaction removed an epoch's first batches, or all of them, the model
// (rebuilt from what recovery kept) no longer knows where the epoch began:
// only that it began after the previous epoch's last batch and at or
// before its own first. The cache must hold every epoch the batches show,
// in order, each starting within those bounds; it may hold epochs whose
// batches are all gone, between the others.
func (r *run) checkEpochsCompacted() *violation {
	type span struct {
		epoch       int32
		first, last int64
	}
	var spans []span
	for _, b := range visibleFrom(r.model.batches, r.model.start) {
		if n := len(spans); n > 0 && spans[n-1].epoch == b.epoch {
			spans[n-1].last = b.last
			continue
		}
		spans = append(spans, span{epoch: b.epoch, first: max(b.base, r.model.start), last: b.last})
	}
	got := r.log.EpochEntries()
	bad := func() *violation {
		return &violation{"epochs", fmt.Sprintf("epoch cache %v, batches call for %v", got, spans)}
	}
	j := 0 // the next span to match
	for i, e := range got {
		if e.StartOffset < r.model.start || (i > 0 && e.StartOffset <= got[i-1].StartOffset) {
			return bad()
		}
		if j > 0 && e.StartOffset <= spans[j-1].last {
			return bad()
		}
		if j < len(spans) && spans[j].epoch == e.Epoch {
			if e.StartOffset > spans[j].first {
				return bad()
			}
			j++
			continue
		}
		// An epoch none of whose batches remain.
		if j < len(spans) && (e.Epoch > spans[j].epoch || e.StartOffset > spans[j].first) {
			return bad()
		}
	}
	if j != len(spans) {
		return bad()
	}
	return nil
}
