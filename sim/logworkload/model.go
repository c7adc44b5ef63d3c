package logworkload

import (
	"bytes"
	"cmp"
	"slices"

	"sluice/core/batch"
	"sluice/core/log"
)

// modelBatch is one batch as the model remembers it: where it sits and its
// exact stored bytes.
type modelBatch struct {
	base, last int64
	epoch      int32
	bytes      []byte
}

// history is the model: the log's current state plus what a crash may
// legitimately bring back.
//
// States change at operations; each gets an index. Appends extend the
// current branch; a truncation freezes it (its last state is the largest of
// the branch: every earlier state of it is a prefix) and starts a new one.
// So "a prefix of some state since index w" is "a prefix of the frozen
// branches that lasted until at least w, or of the current one".
type history struct {
	start   int64
	end     int64
	batches []modelBatch // the current branch, from the first batch recovery left

	state   int      // index of the current state
	frozen  []branch // branches cut by truncations
	startAt []int64  // start offset of each state, by index
}

type branch struct {
	until   int // index of the branch's last state
	batches []modelBatch
	// restart: a restart froze the branch. Its old segments stay on disk
	// until a checkpoint records the restart, so a crash may bring the
	// branch back until then, however many rounds completed meanwhile
	// (a full disk refuses the checkpoint, not the round).
	restart bool
}

// reset starts a history whose only state is what recovery produced.
func (h *history) reset(start, end int64, batches []modelBatch) {
	*h = history{start: start, end: end, batches: batches}
	h.startAt = []int64{start}
}

// next records that an operation produced a new state.
func (h *history) next() {
	h.state++
	h.startAt = append(h.startAt, h.start)
}

func (h *history) appendBatch(b []byte) {
	header, err := batch.Parse(b)
	if err != nil {
		panic("logworkload: appended batch does not parse")
	}
	h.batches = append(h.batches, modelBatch{base: header.BaseOffset, last: header.LastOffset(), epoch: header.LeaderEpoch, bytes: bytes.Clone(b)})
	h.end = header.NextOffset()
}

// truncate cuts the model where the log's TruncateTo(offset) cuts it.
func (h *history) truncate(offset int64) {
	h.frozen = append(h.frozen, branch{until: h.state, batches: h.batches})
	i := h.holding(offset)
	if h.batches[i].base < h.start {
		h.batches, h.end = nil, h.start
	} else {
		h.end = h.batches[i].base
		h.batches = append([]modelBatch(nil), h.batches[:i]...)
	}
}

// restart empties the model where the log's TruncateFullyAndStartAt(offset)
// empties it. The start may go down as well as up, so the emptied log is a
// state of its own, recorded with its start: the state before keeps the
// start the log had, which a crash may bring back with it.
func (h *history) restart(offset int64) {
	h.frozen = append(h.frozen, branch{until: h.state, batches: h.batches, restart: true})
	h.batches, h.start, h.end = nil, offset, offset
	h.next()
}

// startRange is the lowest and highest start offset of the states since
// index since, the current one included: where a recovered start may be.
// Starts only go up, but for a restart.
func (h *history) startRange(since int) (lowest, highest int64) {
	lowest, highest = h.start, h.start
	for _, start := range h.startAt[since:] {
		lowest, highest = min(lowest, start), max(highest, start)
	}
	return lowest, highest
}

// cutAt cuts the model after its first kept batches, the log now ending at
// end: what a compaction seed's truncation does, where the log decides the
// end (see truncateCompacted).
func (h *history) cutAt(kept int, end int64) {
	h.frozen = append(h.frozen, branch{until: h.state, batches: h.batches})
	h.batches = append([]modelBatch(nil), h.batches[:kept]...)
	h.end = end
}

// advanceStart moves the start offset up. The batches below it stay in the
// model: a crash may bring an older start back.
func (h *history) advanceStart(start int64) {
	h.start = max(h.start, start)
}

// batchesFrom are the current batches that begin at or after offset.
func (h *history) batchesFrom(offset int64) []modelBatch {
	i, _ := slices.BinarySearchFunc(h.batches, offset, func(b modelBatch, offset int64) int {
		return cmp.Compare(b.base, offset)
	})
	return h.batches[i:]
}

// holding is the index of the current batch holding offset, or -1.
func (h *history) holding(offset int64) int {
	low, high := 0, len(h.batches)
	for low < high {
		middle := (low + high) / 2
		if h.batches[middle].last < offset {
			low = middle + 1
		} else {
			high = middle
		}
	}
	if low < len(h.batches) && h.batches[low].base <= offset {
		return low
	}
	return -1
}

// candidates are the branches whose states include one at or after index
// since, or, for a branch a restart froze, at or after index
// checkpointSince (the state in which the last round that wrote a
// checkpoint began): the recovered log must be a prefix of one of them.
func (h *history) candidates(since, checkpointSince int) [][]modelBatch {
	var all [][]modelBatch
	for _, b := range h.frozen {
		if b.until >= since || (b.restart && b.until >= checkpointSince) {
			all = append(all, b.batches)
		}
	}
	return append(all, h.batches)
}

// epochs are the leader epoch entries the batches call for: each change of
// epoch among the batches at or after the start.
func (h *history) epochs() []log.EpochEntry {
	var entries []log.EpochEntry
	for _, b := range h.batches {
		if b.last < h.start {
			continue
		}
		if len(entries) == 0 || entries[len(entries)-1].Epoch != b.epoch {
			entries = append(entries, log.EpochEntry{Epoch: b.epoch, StartOffset: max(b.base, h.start)})
		}
	}
	return entries
}

// visibleFrom returns the batches a reader reaches from start: those
// ending at or after it.
func visibleFrom(batches []modelBatch, start int64) []modelBatch {
	for len(batches) > 0 && batches[0].last < start {
		batches = batches[1:]
	}
	return batches
}

// isPrefix reports whether recovered, read from start, is a batch-aligned
// prefix of the candidate's batches from start.
func isPrefix(recovered [][]byte, candidate []modelBatch, start int64) bool {
	candidate = visibleFrom(candidate, start)
	if len(recovered) > len(candidate) {
		return false
	}
	for i := range recovered {
		if !bytes.Equal(recovered[i], candidate[i].bytes) {
			return false
		}
	}
	return true
}
