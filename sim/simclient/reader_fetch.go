package simclient

import (
	"errors"
	"fmt"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"sluice/core/batch"
	"sluice/jepsen/history"
)

// listOffsets asks one leader where some partitions start (earliest) or
// end (latest), and sets positions or drain targets from the answer.
func (r *Reader) listOffsets(tps []history.TopicPartition, timestamp int64) {
	groups, _ := r.byLeader(tps)
	if len(groups) == 0 {
		r.backOff(true)
		return
	}
	leader := groups[0].leader
	req := newListOffsetsRequest(r.client, groups[0].partitions, timestamp)
	r.stats.ListOffsets++
	r.requestInFlight = true
	r.client.Request(leader, req, func(resp kmsg.Response, err error) {
		r.requestInFlight = false
		if err != nil {
			r.stats.Errors++
			r.backOff(false)
			return
		}
		refresh, failed := false, false
		for _, t := range resp.(*kmsg.ListOffsetsResponse).Topics {
			for _, answer := range t.Partitions {
				p := r.positions[history.TopicPartition{Topic: t.Topic, Partition: answer.Partition}]
				switch {
				case p == nil:
					continue // not asked for
				case answer.ErrorCode != 0 || answer.Offset < 0:
					failed = true
					refresh = refresh || metadataIsStale(answer.ErrorCode)
				case timestamp == timestampLatest:
					p.target = answer.Offset
				case p.offset == history.OffsetUnknown:
					r.sawLogStart(history.TopicPartition{Topic: t.Topic, Partition: answer.Partition}, answer.Offset)
					p.offset = answer.Offset
					if p.resetting {
						p.resetting = false
						r.recordSeek(history.TopicPartition{Topic: t.Topic, Partition: answer.Partition}, answer.Offset)
					}
				}
			}
		}
		if failed {
			r.stats.Errors++
			r.backOff(refresh)
			return
		}
		r.schedule(0)
	})
}

// recordSeek records a position reset as a seek.
func (r *Reader) recordSeek(tp history.TopicPartition, offset int64) {
	r.stats.Seeks++
	seeks := []history.Seek{{Partition: tp, Offset: offset}}
	op, err := r.recorder.Invoke(r.process, history.FuncSeek, history.Payload{Seeks: seeks})
	if err != nil {
		panic(fmt.Sprintf("simclient: %s cannot record a seek: %v", r.client.Name(), err))
	}
	op.OK(history.Payload{Seeks: seeks})
	r.client.note(fmt.Sprintf("seek %s to %d", tp, offset))
}

// fetch reads partitions from one leader (leaders take turns) and records
// the poll.
func (r *Reader) fetch(tps []history.TopicPartition) {
	groups, missing := r.byLeader(tps)
	if len(groups) == 0 {
		r.backOff(true)
		return
	}
	if missing {
		// Read what can be read; find the other leaders meanwhile.
		r.client.RefreshMetadata(func(error) {})
	}
	chosen := groups[r.leaderNext%len(groups)]
	leader := chosen.leader
	r.leaderNext++
	asked := make([]fetched, 0, len(chosen.partitions))
	for _, tp := range chosen.partitions {
		asked = append(asked, fetched{partition: tp, from: r.positions[tp].offset})
	}
	req := newFetchRequest(r.client, fetchLimits{
		maxWait: r.config.FetchMaxWait, maxBytes: r.config.FetchMaxBytes, partitionMaxBytes: r.config.PartitionMaxBytes,
	}, asked)
	op, err := r.recorder.Invoke(r.process, history.FuncPoll, history.Payload{})
	if err != nil {
		panic(fmt.Sprintf("simclient: %s cannot record a poll: %v", r.client.Name(), err))
	}
	r.poll = op
	r.stats.Fetches++
	r.requestInFlight = true
	r.client.RequestFetch(leader, req, func(resp kmsg.Response, err error) {
		r.requestInFlight = false
		r.poll = nil
		if err != nil {
			// A read that got no answer changed nothing: fail, not info.
			r.stats.FetchesFailed++
			op.Fail(err.Error())
			r.backOff(false)
			return
		}
		answer := resp.(*kmsg.FetchResponse)
		if answer.ErrorCode != 0 {
			r.stats.FetchesFailed++
			op.Fail(kerr.ErrorForCode(answer.ErrorCode).Error())
			r.backOff(metadataIsStale(answer.ErrorCode))
			return
		}
		polls, troubled, refresh := r.readFetchAnswer(asked, answer)
		op.OK(history.Payload{Polls: polls})
		if troubled {
			r.stats.Errors++
			r.backOff(refresh)
			return
		}
		r.schedule(0)
	})
}

// readFetchAnswer turns a fetch answer into the poll's records and moves
// positions. An empty partition is part of the poll only when the broker's
// high watermark is exactly the position: then it says the log ends there.
// troubled reports an error in some partition, refresh a stale leader.
func (r *Reader) readFetchAnswer(asked []fetched, resp *kmsg.FetchResponse) (polls []history.Poll, troubled, refresh bool) {
	for _, a := range asked {
		answer := findFetchPartition(resp, a.partition)
		if answer == nil {
			troubled = true // the broker left it out; ask again
			continue
		}
		r.sawLogStart(a.partition, answer.LogStartOffset)
		switch answer.ErrorCode {
		case 0:
		case kerr.OffsetOutOfRange.Code:
			// auto.offset.reset=earliest: look the start up again.
			r.stats.OutOfRange++
			r.client.note(fmt.Sprintf("%s offset %d out of range (high watermark %d)", a.partition, a.from, answer.HighWatermark))
			p := r.positions[a.partition]
			p.offset, p.resetting = history.OffsetUnknown, true
			continue
		default:
			troubled = true
			refresh = refresh || metadataIsStale(answer.ErrorCode)
			continue
		}
		records, next, err := decodeRecords(answer.RecordBatches, a.from)
		if err != nil {
			// A CRC failure (a bit flipped on the broker's disk read):
			// a Kafka consumer refuses the batch; read it again.
			r.stats.CorruptAnswers++
			r.client.note(fmt.Sprintf("%s fetch from %d refused: %v", a.partition, a.from, err))
			troubled = true
			continue
		}
		switch {
		case len(records) > 0:
			r.stats.RecordsRead += int64(len(records))
			polls = append(polls, history.Poll{Partition: a.partition, From: a.from, Records: records})
		case answer.HighWatermark == a.from:
			r.stats.PollsEmpty++
			polls = append(polls, history.Poll{Partition: a.partition, From: a.from, Records: []history.Record{}})
		}
		if next > a.from {
			r.positions[a.partition].offset = next
		}
	}
	return polls, troubled, refresh
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

// decodeRecords reads the records at or after from in a fetch answer's
// batches, checking each batch's CRC, and returns the offset after the last
// whole batch. A batch cut short at the end of the answer is ignored, as
// Kafka's consumers do; anything else wrong refuses the whole answer.
func decodeRecords(data []byte, from int64) (records []history.Record, next int64, err error) {
	next = from
	s := batch.Scanner{Buf: data, VerifyCRC: true}
	for s.Next() {
		h := s.Header()
		next = max(next, h.NextOffset())
		if h.IsControl() {
			continue
		}
		decoded, err := batch.Records(s.Batch())
		if err != nil {
			return nil, from, err
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
		return nil, from, err
	}
	return records, next, nil
}
