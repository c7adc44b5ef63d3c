package simclient

import (
	"fmt"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

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
	r.fetching.ask(len(chosen.partitions))
	for _, tp := range chosen.partitions {
		r.fetching.asked = append(r.fetching.asked, fetched{partition: tp, from: r.positions[tp].offset})
	}
	req := r.fetching.newFetchRequest(r.client, r.config)
	op, err := r.recorder.Invoke(r.process, history.FuncPoll, history.Payload{})
	if err != nil {
		panic(fmt.Sprintf("simclient: %s cannot record a poll: %v", r.client.Name(), err))
	}
	r.poll = op
	r.stats.Fetches++
	r.requestInFlight = true
	r.client.RequestFetch(leader, req, r.fetchAnsweredEvent)
}

// fetchAnswered takes the answer to the fetch in flight, whose poll is
// r.poll.
func (r *Reader) fetchAnswered(resp kmsg.Response, err error) {
	op := r.poll
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
	polls, troubled, refresh := r.readFetchAnswer(answer)
	op.OK(history.Payload{Polls: polls})
	if troubled {
		r.stats.Errors++
		r.backOff(refresh)
		return
	}
	r.schedule(0)
}

// readFetchAnswer reads a fetch answer (readFetchAnswer in
// fetch_answers.go), noting every log start offset it shows.
func (r *Reader) readFetchAnswer(resp *kmsg.FetchResponse) (polls []history.Poll, troubled, refresh bool) {
	read := readFetchAnswer(r.client, &r.fetching, resp, func(tp history.TopicPartition) *readPosition {
		return &r.positions[tp].readPosition
	}, r.sawLogStart)
	r.stats.RecordsRead += read.records
	r.stats.PollsEmpty += read.pollsEmpty
	r.stats.OutOfRange += read.outOfRange
	r.stats.CorruptAnswers += read.corrupt
	return read.polls, read.troubled, read.refresh
}
