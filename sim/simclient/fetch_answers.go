package simclient

import (
	"errors"
	"fmt"
	"slices"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"sluice/core/batch"
	"sluice/jepsen/history"
)

// How a consumer reads a fetch answer, shared by the Reader and the
// GroupConsumer: the two differ in where their positions come from (the
// earliest offset, or the group's committed offsets) and in what they do
// after a poll, not in how one answer moves a position.

// readPosition is where a consumer reads one partition from: the part of
// the Reader's and the GroupConsumer's positions a fetch answer moves.
type readPosition struct {
	// offset is the next offset to read, history.OffsetUnknown until
	// ListOffsets (or a committed offset) has said where to start.
	offset int64
	// resetting is set when offset was thrown away (out of range): the
	// offset ListOffsets gives next is a seek to record.
	resetting bool
	// highWatermark is the one the partition's last answer reported: a
	// position below it has records waiting.
	highWatermark int64
}

// fetchRead is what reading one fetch answer found.
type fetchRead struct {
	polls []history.Poll
	// troubled reports an error in some partition, refresh a stale
	// leader among them.
	troubled, refresh bool

	records, pollsEmpty, outOfRange, corrupt int64
}

// readFetchAnswer turns a fetch answer into the poll's records, in b's
// polls and records, and moves the partitions b asked for to their new
// positions (positionOf finds each). An empty
// partition is part of the poll only when the broker's high watermark is
// exactly the position: then it says the log ends there. An answer out of
// range throws the position away (auto.offset.reset=earliest: it is
// looked up again and recorded as a seek); a batch failing its CRC (a bit
// flipped on the broker's disk read) refuses that partition's answer, as
// a Kafka consumer does, to be read again. sawLogStart, when set, is told
// every log start offset the answer shows.
func readFetchAnswer(c *Client, b *fetchBuffers, resp *kmsg.FetchResponse, positionOf func(history.TopicPartition) *readPosition, sawLogStart func(history.TopicPartition, int64)) fetchRead {
	read := fetchRead{polls: b.polls[:0]}
	b.records = b.records[:0]
	for _, a := range b.asked {
		answer := findFetchPartition(resp, a.partition)
		if answer == nil {
			read.troubled = true // the broker left it out; ask again
			continue
		}
		if sawLogStart != nil {
			sawLogStart(a.partition, answer.LogStartOffset)
		}
		p := positionOf(a.partition)
		switch answer.ErrorCode {
		case 0:
			p.highWatermark = answer.HighWatermark
		case kerr.OffsetOutOfRange.Code:
			read.outOfRange++
			c.note(fmt.Sprintf("%s offset %d out of range (high watermark %d)", a.partition, a.from, answer.HighWatermark))
			p.offset, p.resetting = history.OffsetUnknown, true
			continue
		default:
			read.troubled = true
			read.refresh = read.refresh || metadataIsStale(answer.ErrorCode)
			continue
		}
		start := len(b.records)
		all, next, err := decodeRecords(c, b.records, answer.RecordBatches, a.from)
		if err != nil {
			read.corrupt++
			c.note(fmt.Sprintf("%s fetch from %d refused: %v", a.partition, a.from, err))
			read.troubled = true
			continue
		}
		b.records = all
		records := all[start:len(all):len(all)]
		switch {
		case len(records) > 0:
			read.records += int64(len(records))
			read.polls = append(read.polls, history.Poll{Partition: a.partition, From: a.from, Records: records})
		case answer.HighWatermark == a.from:
			read.pollsEmpty++
			read.polls = append(read.polls, history.Poll{Partition: a.partition, From: a.from, Records: []history.Record{}})
		}
		if next > a.from {
			p.offset = next
		}
	}
	b.polls = read.polls
	if len(read.polls) == 0 {
		read.polls = nil // as an answer with nothing to poll always was
	}
	return read
}

func findFetchPartition(resp *kmsg.FetchResponse, tp history.TopicPartition) *kmsg.FetchResponseTopicPartition {
	for ti := range resp.Topics {
		t := &resp.Topics[ti]
		if t.Topic != tp.Topic {
			continue
		}
		for pi := range t.Partitions {
			if t.Partitions[pi].Partition == tp.Partition {
				return &t.Partitions[pi]
			}
		}
	}
	return nil
}

// decodeRecords appends to records those at or after from in a fetch
// answer's batches, checking each batch's CRC and decompressing those
// compressed with c's codecs, and returns the offset after
// the last whole batch. A batch cut short at the end of the answer is
// ignored, as Kafka's consumers do; anything else wrong refuses the whole
// answer, and returns records as it was.
func decodeRecords(c *Client, records []history.Record, data []byte, from int64) (_ []history.Record, next int64, err error) {
	next = from
	original := records
	// Room for every record the batches hold, counted from their headers
	// alone (no CRC), rather than growing batch by batch: the final
	// drain's answers carry hundreds of one-record batches.
	if count := recordsIn(data); count > 0 {
		records = slices.Grow(records, count)
	}
	s := batch.Scanner{Buf: data, VerifyCRC: true}
	for s.Next() {
		h := s.Header()
		next = max(next, h.NextOffset())
		if h.IsControl() {
			continue
		}
		decoded, err := c.batchRecords(s.Batch(), h)
		if err != nil {
			return original, from, err
		}
		for _, record := range decoded {
			offset := h.BaseOffset + int64(record.OffsetDelta)
			if offset < from {
				continue // consumers drop what lies before their position
			}
			records = append(records, history.Record{Offset: offset, Key: string(record.Key), Value: string(record.Value)})
		}
	}
	if err := s.Err(); err != nil && !errors.Is(err, batch.ErrTorn) {
		return original, from, err
	}
	return records, next, nil
}

// recordsIn counts the records of the data batches at the start of data
// by their headers: at most how many decodeRecords returns. A header is
// not checked against its CRC here, so a count is believed only as far as
// the batch's bytes could hold that many records.
func recordsIn(data []byte) int {
	count := 0
	for s := (batch.Scanner{Buf: data}); s.Next(); {
		if h := s.Header(); !h.IsControl() {
			count += max(0, min(int(h.RecordCount), len(s.Batch())/recordBytesMin))
		}
	}
	return count
}

// recordBytesMin is the fewest bytes a record takes in a batch: a length,
// attributes, timestamp and offset deltas, key and value lengths and a
// header count, a byte each at least.
const recordBytesMin = 7
