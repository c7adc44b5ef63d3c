package logworkload

import (
	"bytes"
	"errors"
	"fmt"

	"sluice/core/batch"
	"sluice/core/log"
)

// recoverFromCrash restarts the crashed machine, reopens the log and checks
// what recovery kept against what the log had promised.
func (r *run) recoverFromCrash() *violation {
	if r.halted {
		r.counts.halts++
	} else {
		r.counts.crashes++
	}
	r.halted = false
	// What the log instance that died had promised, and which of its
	// states its last completed sync began in.
	synced := r.log.SyncedOffset()
	stats := r.log.SyncStats()
	since, startSince := r.openState, r.openState
	if stats.RoundsCompleted > 0 {
		since = r.roundStates[stats.RoundsCompleted-1]
	}
	// The start offset is durable as of the last checkpoint written.
	if stats.CheckpointRound > 0 {
		startSince = r.roundStates[stats.CheckpointRound-1]
	}
	r.machine.Restart()
	if v := r.open(); v != nil {
		return v
	}
	r.note(fmt.Sprintf("recovered [%d, %d) synced before %d", r.log.StartOffset(), r.log.EndOffset(), synced))
	return r.checkRecovered(synced, since, startSince)
}

func (r *run) checkRecovered(synced int64, since, startSince int) *violation {
	m := &r.model
	start, end := r.log.StartOffset(), r.log.EndOffset()
	recovered, v := r.readAll("recovery-kept-corrupt")
	if v != nil {
		return v
	}
	if lowest, highest := m.startRange(startSince); start < lowest || start > highest {
		return &violation{"start-offset", fmt.Sprintf("recovered start %d outside [%d, %d]", start, lowest, highest)}
	}
	if v := r.checkTimeLookups(recovered); v != nil {
		return v
	}
	if r.settings.compaction.on {
		if v := r.checkRecoveredCompacted(recovered, synced, since, startSince, start); v != nil {
			return v
		}
	} else if v := checkRecoveredExactly(m, recovered, synced, since, startSince, start, end); v != nil {
		return v
	}
	if v := r.checkRestartPromise(recovered, start, end); v != nil {
		return v
	}
	r.promise = nil
	var batches []modelBatch
	for _, b := range recovered {
		h, _ := batch.Parse(b)
		batches = append(batches, modelBatch{base: h.BaseOffset, last: h.LastOffset(), epoch: h.LeaderEpoch, bytes: b})
	}
	expectedEnd := start
	if len(batches) > 0 {
		expectedEnd = batches[len(batches)-1].last + 1
	}
	if end != expectedEnd {
		return &violation{"offsets", fmt.Sprintf("recovered end %d, but its batches end at %d", end, expectedEnd)}
	}
	r.model.reset(start, end, batches)
	r.openState = r.model.state
	r.observe()
	return r.checkEpochs()
}

// checkRecoveredExactly checks a recovered log byte for byte: every batch
// below the synced offset survives, and nothing else comes back but a
// prefix of a state since the last completed sync began.
func checkRecoveredExactly(m *history, recovered [][]byte, synced int64, since, startSince int, start, end int64) *violation {
	// Every batch below the synced offset survives, byte for byte, unless
	// it was below the start offset already (deleted, even if the crash
	// brought an older start back).
	for i, b := range visibleFrom(m.batches, start) {
		if b.last < m.start {
			continue
		}
		if b.last >= synced {
			break
		}
		if i >= len(recovered) || !bytes.Equal(recovered[i], b.bytes) {
			return &violation{"synced-lost", fmt.Sprintf("batch [%d, %d] was below synced offset %d before the crash; recovered [%d, %d)", b.base, b.last, synced, start, end)}
		}
	}
	// Nothing else comes back: a prefix of a state since the last
	// completed sync began.
	consistent := false
	for _, candidate := range m.candidates(since, startSince) {
		consistent = consistent || isPrefix(recovered, candidate, start)
	}
	if !consistent {
		return &violation{"resurrected", fmt.Sprintf("recovered [%d, %d) (%d batches) is no prefix of a state since the last completed sync: %s",
			start, end, len(recovered), describeMismatch(recovered, m.candidates(since, startSince), start))}
	}
	return nil
}

// checkRecoveredCompacted is checkRecoveredExactly for a compaction seed:
// what recovery kept is a compaction of a prefix of a state since the last
// completed sync began, and below the synced offset every batch compaction
// may not touch survives byte for byte and every key keeps its latest
// record.
func (r *run) checkRecoveredCompacted(recovered [][]byte, synced int64, since, startSince int, start int64) *violation {
	m := &r.model
	for _, b := range visibleFrom(m.batches, start) {
		if b.last < m.start || b.last < r.compactedBelow {
			continue
		}
		if b.last >= synced {
			break
		}
		found := false
		for _, got := range recovered {
			found = found || bytes.Equal(got, b.bytes)
		}
		if !found {
			return &violation{"synced-lost", fmt.Sprintf("batch [%d, %d] was below synced offset %d before the crash and above compaction's reach %d", b.base, b.last, synced, r.compactedBelow)}
		}
	}
	if v := checkKeys(r.codecs, recovered, m.batches, max(start, m.start), synced); v != nil {
		v.check = "synced-lost"
		return v
	}
	for _, candidate := range m.candidates(since, startSince) {
		if compactedPrefix(r.codecs, recovered, candidate, start, r.compactedBelow) {
			return nil
		}
	}
	return &violation{"resurrected", fmt.Sprintf("recovered %d batches from %d that are no compaction of a prefix of a state since the last completed sync", len(recovered), start)}
}

// readAll reads the whole log batch by batch. A read error is a violation
// of the given check.
func (r *run) readAll(check string) ([][]byte, *violation) {
	var all [][]byte
	end := r.log.EndOffset()
	for offset := r.log.StartOffset(); offset < end; {
		b, err := r.log.Read(offset, end, 1, true)
		if err != nil {
			if !errors.Is(err, log.ErrCorrupt) {
				check = "read-failed"
			}
			return nil, &violation{check, fmt.Sprintf("Read(%d) of a log ending at %d: %v", offset, end, err)}
		}
		validate, gapsAllowed := batch.Validate, false
		if r.settings.compaction.on {
			validate, gapsAllowed = batch.ValidateCompacted, true
		}
		h, err := validate(b)
		if err != nil || h.LastOffset() < offset || (h.BaseOffset > offset && !gapsAllowed) {
			return nil, &violation{"corrupt-served", fmt.Sprintf("Read(%d) returned %d bytes that are not the batch holding it: batch [%d, %d] (%v)", offset, len(b), h.BaseOffset, h.LastOffset(), err)}
		}
		all = append(all, b)
		offset = h.NextOffset()
	}
	return all, nil
}

// checkContents reads the whole log and compares it with the model.
func (r *run) checkContents(check string) *violation {
	all, v := r.readAll("read-failed")
	if v != nil {
		return v
	}
	m := &r.model
	if r.log.StartOffset() != m.start || r.log.EndOffset() != m.end {
		return &violation{"offsets", fmt.Sprintf("log [%d, %d), model [%d, %d)", r.log.StartOffset(), r.log.EndOffset(), m.start, m.end)}
	}
	if r.settings.compaction.on {
		if !compactedPrefix(r.codecs, all, m.batches, m.start, r.compactedBelow) {
			return &violation{"compaction-mangled", fmt.Sprintf("the log's %d batches are no compaction of the model's", len(all))}
		}
		if v := checkKeys(r.codecs, all, m.batches, m.start, m.end); v != nil {
			return v
		}
		return r.checkEpochs()
	}
	if visible := visibleFrom(m.batches, m.start); !isPrefix(all, visible, m.start) || len(all) != len(visible) {
		return &violation{check, fmt.Sprintf("the log's %d batches differ from the model's %d", len(all), len(visible))}
	}
	return r.checkEpochs()
}

// checkEpochs compares the leader epoch cache with the batches.
func (r *run) checkEpochs() *violation {
	if r.settings.compaction.on {
		return r.checkEpochsCompacted()
	}
	want, got := r.model.epochs(), r.log.EpochEntries()
	equal := len(want) == len(got)
	for i := 0; equal && i < len(want); i++ {
		equal = want[i] == got[i]
	}
	// With no batch at or after the start, the epoch in force there may
	// stay, moved to the start (as Kafka's cache does).
	if !equal && !(len(want) == 0 && len(got) <= 1 && (len(got) == 0 || got[0].StartOffset == r.model.end)) {
		return &violation{"epochs", fmt.Sprintf("epoch cache %v, batches call for %v", got, want)}
	}
	return nil
}

// describeMismatch says where the recovered log first departs from each
// candidate, for the failure's detail.
func describeMismatch(recovered [][]byte, candidates [][]modelBatch, start int64) string {
	var b bytes.Buffer
	for _, candidate := range candidates {
		visible := visibleFrom(candidate, start)
		i := 0
		for i < len(recovered) && i < len(visible) && bytes.Equal(recovered[i], visible[i].bytes) {
			i++
		}
		switch {
		case i == len(recovered):
			fmt.Fprintf(&b, "[prefix]")
		case i == len(visible):
			fmt.Fprintf(&b, "[longer than %d batches]", len(visible))
		default:
			h, _ := batch.Parse(recovered[i])
			fmt.Fprintf(&b, "[batch %d: recovered %d-%d e%d %dB, state has %d-%d e%d %dB]", i, h.BaseOffset, h.LastOffset(), h.LeaderEpoch, len(recovered[i]), visible[i].base, visible[i].last, visible[i].epoch, len(visible[i].bytes))
		}
	}
	return b.String()
}
