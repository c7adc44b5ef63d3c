package producer

import (
	"fmt"
	"slices"
	"sort"

	"sluice/core/batch"
)

// BatchesRetained is how many recent batches per producer are remembered for
// duplicate detection: Kafka's idempotent producers keep at most five
// requests in flight, so a retry is always one of the last five.
const BatchesRetained = 5

// ProducersMax bounds the producer ids one partition tracks; beyond it the
// least recently active are forgotten first, as expiry would.
const ProducersMax = 100_000

// BatchMetadata is what is remembered of one appended batch.
type BatchMetadata struct {
	FirstSequence int32
	LastSequence  int32
	FirstOffset   int64
	LastOffset    int64
	MaxTimestamp  int64
}

// Entry is one producer's state in a partition.
type Entry struct {
	ProducerID int64
	Epoch      int16
	// Batches are the most recent batches, oldest first.
	Batches []BatchMetadata
	// LastUpdate is the wall-clock time (ms) of the last append, for
	// expiry (producer.id.expiration.ms).
	LastUpdate int64
}

// lastSequence is the sequence of the last record appended, or -1.
func (e *Entry) lastSequence() int32 {
	if len(e.Batches) == 0 {
		return -1
	}
	return e.Batches[len(e.Batches)-1].LastSequence
}

// State is the idempotent-producer state of one partition.
type State struct {
	producers map[int64]*Entry
}

// NewState returns an empty state.
func NewState() *State {
	return &State{producers: map[int64]*Entry{}}
}

// Verdict is what Check decided about a batch.
type Verdict int

const (
	// Append: write the batch.
	Append Verdict = iota
	// Duplicate: the batch was already written; answer with Original.
	Duplicate
	// OutOfOrder: the sequence does not follow the last one
	// (OUT_OF_ORDER_SEQUENCE_NUMBER).
	OutOfOrder
	// StaleEpoch: the producer's epoch is older than the one on record
	// (INVALID_PRODUCER_EPOCH); a newer producer instance fenced it.
	StaleEpoch
)

// Decision is Check's answer.
type Decision struct {
	Verdict Verdict
	// Original is the batch a Duplicate repeats.
	Original BatchMetadata
	// Latest is set when Original is the producer's most recent batch:
	// only a producer with several batches in flight retries an older
	// one.
	Latest bool
	// Reason explains a refusal, for logs.
	Reason string
}

// Check decides what to do with a batch from a producer, following Kafka's
// ProducerAppendInfo: a batch with no producer id is always appended; an
// older epoch is fenced; a new epoch must start at sequence 0 unless the
// producer is unknown here; within an epoch, a batch matching one of the
// last five is a duplicate and otherwise its first sequence must follow the
// last one.
func (s *State) Check(h batch.Header) Decision {
	if h.ProducerID == batch.NoProducerID {
		return Decision{Verdict: Append}
	}
	e, known := s.producers[h.ProducerID]
	if !known {
		// Unknown producer: its state expired or its batches were
		// removed by retention. Kafka (KIP-360) accepts any sequence.
		return Decision{Verdict: Append}
	}
	if h.ProducerEpoch < e.Epoch {
		return Decision{Verdict: StaleEpoch, Reason: fmt.Sprintf("producer %d epoch %d is older than %d", h.ProducerID, h.ProducerEpoch, e.Epoch)}
	}
	if h.ProducerEpoch > e.Epoch {
		if h.BaseSequence != 0 {
			return Decision{Verdict: OutOfOrder, Reason: fmt.Sprintf("producer %d new epoch %d starts at sequence %d, not 0", h.ProducerID, h.ProducerEpoch, h.BaseSequence)}
		}
		return Decision{Verdict: Append}
	}
	for i, b := range e.Batches {
		if b.FirstSequence == h.BaseSequence && b.LastSequence == h.LastSequence() {
			return Decision{Verdict: Duplicate, Original: b, Latest: i == len(e.Batches)-1}
		}
	}
	if want := batch.IncrementSequence(e.lastSequence(), 1); h.BaseSequence != want {
		return Decision{Verdict: OutOfOrder, Reason: fmt.Sprintf("producer %d epoch %d sent sequence %d, expected %d", h.ProducerID, h.ProducerEpoch, h.BaseSequence, want)}
	}
	return Decision{Verdict: Append}
}

// Record notes an appended batch (on the leader after Check said Append, on
// a follower for every replicated batch, and during replay). nowMs is the
// wall-clock time of the append.
func (s *State) Record(h batch.Header, nowMs int64) {
	if h.ProducerID == batch.NoProducerID {
		return
	}
	e, known := s.producers[h.ProducerID]
	if !known {
		if len(s.producers) >= ProducersMax {
			s.evictOldest()
		}
		e = &Entry{ProducerID: h.ProducerID, Epoch: h.ProducerEpoch}
		s.producers[h.ProducerID] = e
	}
	if h.ProducerEpoch < e.Epoch {
		panic(fmt.Sprintf("producer: recorded batch of producer %d with epoch %d below %d", h.ProducerID, h.ProducerEpoch, e.Epoch))
	}
	if h.ProducerEpoch > e.Epoch {
		e.Epoch = h.ProducerEpoch
		e.Batches = e.Batches[:0]
	}
	e.Batches = append(e.Batches, BatchMetadata{
		FirstSequence: h.BaseSequence,
		LastSequence:  h.LastSequence(),
		FirstOffset:   h.BaseOffset,
		LastOffset:    h.LastOffset(),
		MaxTimestamp:  h.MaxTimestamp,
	})
	if len(e.Batches) > BatchesRetained {
		e.Batches = slices.Delete(e.Batches, 0, len(e.Batches)-BatchesRetained)
	}
	e.LastUpdate = nowMs
}

// Expire forgets producers idle since before cutoffMs
// (producer.id.expiration.ms ago), and reports how many it forgot.
func (s *State) Expire(cutoffMs int64) int {
	forgotten := 0
	for id, e := range s.producers { // order-independent: deletes by a per-entry test
		if e.LastUpdate < cutoffMs {
			delete(s.producers, id)
			forgotten++
		}
	}
	return forgotten
}

func (s *State) evictOldest() {
	var oldest *Entry
	for _, e := range s.producers { // order-independent: ties broken by producer id below
		if oldest == nil || e.LastUpdate < oldest.LastUpdate ||
			(e.LastUpdate == oldest.LastUpdate && e.ProducerID < oldest.ProducerID) {
			oldest = e
		}
	}
	if oldest != nil {
		delete(s.producers, oldest.ProducerID)
	}
}

// Entries returns copies of every producer's state, sorted by producer id.
func (s *State) Entries() []Entry {
	ids := make([]int64, 0, len(s.producers))
	for id := range s.producers {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	entries := make([]Entry, 0, len(ids))
	for _, id := range ids {
		e := *s.producers[id]
		e.Batches = slices.Clone(e.Batches)
		entries = append(entries, e)
	}
	return entries
}

// LastOffsets returns the last offset of each producer's last batch, by
// producer id, for the producers with a batch on record.
func (s *State) LastOffsets() map[int64]int64 {
	last := make(map[int64]int64, len(s.producers))
	for id, e := range s.producers { // order-independent: builds a map
		if n := len(e.Batches); n > 0 {
			last[id] = e.Batches[n-1].LastOffset
		}
	}
	return last
}

// Len is the number of producers tracked.
func (s *State) Len() int { return len(s.producers) }

// Clone returns an independent copy.
func (s *State) Clone() *State {
	c := NewState()
	for _, e := range s.Entries() {
		e := e
		c.producers[e.ProducerID] = &e
	}
	return c
}
