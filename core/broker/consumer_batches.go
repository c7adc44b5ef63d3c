package broker

import (
	"slices"

	"sluice/core/batch"
)

// A compacted log holds empty batches: batches compaction removed every
// record of but kept, for an idempotent producer's last sequence number,
// a leader epoch's start, or the end of a rewritten segment (core/log's
// compaction.go). Kafka sends them to consumers as they are, and clients
// skip them, all but kafka-go: it panics on two in a row ("markRead:
// negative count", segmentio/kafka-go#874 and #1393), and moves its
// position only by the records it gets, so an answer of nothing but empty
// batches has it ask for the same offset again, for good. A consumer
// needs none of them but an answer's last batch, whose end moves its
// position past the gap. So a consumer's answer leaves out every empty
// batch another batch follows, and a read that found only empty batches
// (a compacted segment left with nothing else) goes on from where they
// end. Followers get every batch, as the log holds them.

// consumerReadsMax bounds the reads of one partition for one consumer
// answer: the first, and those past segments holding only empty batches.
const consumerReadsMax = 8

// readPastEmptyBatches returns records, read within limit bytes, and, while
// they hold only empty batches that end below highWatermark, what read
// finds from their end on, at most consumerReadsMax reads in all.
func readPastEmptyBatches(records []byte, limit int, highWatermark int64, read func(offset int64, limit int) []byte) []byte {
	for reads := 1; reads < consumerReadsMax; reads++ {
		end, onlyEmpty := endOfEmptyBatches(records)
		if !onlyEmpty || end >= highWatermark || len(records) >= limit {
			break
		}
		more := read(end, limit-len(records))
		if len(more) == 0 {
			break
		}
		records = slices.Concat(records, more)
	}
	return records
}

// endOfEmptyBatches reports whether records are whole batches, at least
// one, all empty, and the offset after the last.
func endOfEmptyBatches(records []byte) (int64, bool) {
	end, any := int64(0), false
	s := batch.Scanner{Buf: records}
	for s.Next() {
		if s.Header().RecordCount != 0 {
			return 0, false
		}
		end, any = s.Header().LastOffset()+1, true
	}
	return end, any && s.Err() == nil
}

// withoutInnerEmptyBatches returns records without the empty batches
// another batch follows: records itself when there are none (the usual
// case, and no copy), and also when the bytes do not scan as whole
// batches, which are then the client's to judge.
func withoutInnerEmptyBatches(records []byte) []byte {
	var kept []byte
	dropped := false
	emptyStart, emptyEnd := -1, -1 // the last empty batch seen, not yet kept
	s := batch.Scanner{Buf: records}
	for s.Next() {
		start, end := s.Position(), s.Position()+len(s.Batch())
		if emptyStart >= 0 {
			// Another batch follows the empty one: it goes.
			if !dropped {
				kept = append(make([]byte, 0, len(records)), records[:emptyStart]...)
				dropped = true
			}
			emptyStart, emptyEnd = -1, -1
		}
		if s.Header().RecordCount == 0 {
			emptyStart, emptyEnd = start, end
			continue
		}
		if dropped {
			kept = append(kept, records[start:end]...)
		}
	}
	if s.Err() != nil || !dropped {
		return records
	}
	if emptyStart >= 0 {
		kept = append(kept, records[emptyStart:emptyEnd]...)
	}
	return kept
}
