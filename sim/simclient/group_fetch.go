package simclient

import (
	"fmt"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"sluice/jepsen/history"
)

// This file is how a group consumer reads its partitions: as the Reader
// does (reader_fetch.go), from positions set by the group's committed
// offsets instead of the earliest offset, and with each poll recorded on
// the consumer's process between its commits.

// listEarliest asks one leader where partitions without a position start
// (auto.offset.reset=earliest), recording a seek where the position was
// thrown away after OFFSET_OUT_OF_RANGE.
func (g *GroupConsumer) listEarliest(tps []history.TopicPartition) {
	groups, _ := g.leaders.group(g.client, tps)
	if len(groups) == 0 {
		g.refreshAndBackOff()
		return
	}
	leader := groups[0].leader
	req := newListOffsetsRequest(g.client, groups[0].partitions, timestampEarliest)
	g.busy = true
	g.client.Request(leader, req, func(resp kmsg.Response, err error) {
		g.busy = false
		if err != nil {
			g.stats.Errors++
			g.backOff()
			return
		}
		refresh, failed := false, false
		for _, t := range resp.(*kmsg.ListOffsetsResponse).Topics {
			for _, answer := range t.Partitions {
				tp := history.TopicPartition{Topic: t.Topic, Partition: answer.Partition}
				p := g.membership.positions[tp]
				switch {
				case p == nil || p.offset != history.OffsetUnknown:
					continue // not asked for
				case answer.ErrorCode != 0 || answer.Offset < 0:
					failed = true
					refresh = refresh || metadataIsStale(answer.ErrorCode)
				default:
					g.logStarts.saw(tp, answer.Offset)
					p.offset = answer.Offset
					if p.resetting {
						p.resetting = false
						g.recordSeek(tp, answer.Offset)
					}
				}
			}
		}
		switch {
		case refresh:
			g.stats.Errors++
			g.refreshAndBackOff()
		case failed:
			g.stats.Errors++
			g.backOff()
		default:
			g.schedule(0)
		}
	})
}

// refreshAndBackOff refreshes the metadata, then steps after a backoff.
func (g *GroupConsumer) refreshAndBackOff() {
	g.busy = true
	g.client.RefreshMetadata(func(error) {
		g.busy = false
		g.backOff()
	})
}

// recordSeek records a position reset as a seek.
func (g *GroupConsumer) recordSeek(tp history.TopicPartition, offset int64) {
	g.stats.Seeks++
	seeks := []history.Seek{{Partition: tp, Offset: offset}}
	g.invoke(history.FuncSeek, history.Payload{Seeks: seeks}).OK(history.Payload{Seeks: seeks})
	g.client.note(fmt.Sprintf("seek %s to %d", tp, offset))
}

// fetch reads the assigned partitions of one leader and records the poll.
// Leaders take turns, but one whose partitions have records waiting (a
// position below the high watermark its last answer reported) goes before
// those with none: with one request in flight, a turn at an idle leader
// costs a whole fetch wait, and a consumer with a backlog on another
// leader read about six records a second, too slow to drain 232 within
// the liveness bound (cluster seed 3891081). Real clients fetch from
// every leader at once. A leader is passed over at most once in a row.
func (g *GroupConsumer) fetch() {
	groups, missing := g.leaders.group(g.client, g.membership.assigned)
	if len(groups) == 0 {
		g.refreshAndBackOff()
		return
	}
	if missing {
		g.client.RefreshMetadata(func(error) {})
	}
	turn := g.leaderNext % len(groups)
	if !g.skippedALeader {
		for k := range len(groups) {
			if i := (g.leaderNext + k) % len(groups); g.hasRecordsWaiting(groups[i].partitions) {
				turn = i
				break
			}
		}
	}
	// A leader is passed over at most once in a row: its high watermark
	// is only as fresh as its last answer, and records may have come.
	g.skippedALeader = turn != g.leaderNext%len(groups)
	chosen := groups[turn]
	leader := chosen.leader
	g.leaderNext = turn + 1
	g.fetching.ask(len(chosen.partitions))
	for _, tp := range chosen.partitions {
		g.fetching.asked = append(g.fetching.asked, fetched{partition: tp, from: g.membership.positions[tp].offset})
	}
	req := g.fetching.newFetchRequest(g.client, g.config.FetchConfig)
	g.op = g.invoke(history.FuncPoll, history.Payload{})
	g.stats.Fetches++
	g.busy = true
	g.client.RequestFetch(leader, req, g.fetchAnsweredEvent)
}

// hasRecordsWaiting reports whether one of partitions has a known
// position below the high watermark last reported for it.
func (g *GroupConsumer) hasRecordsWaiting(partitions []history.TopicPartition) bool {
	for _, tp := range partitions {
		if p := g.membership.positions[tp]; p != nil && p.offset != history.OffsetUnknown && p.offset < p.highWatermark {
			return true
		}
	}
	return false
}

// fetchAnswered takes the answer to the fetch in flight, whose poll is
// g.op.
func (g *GroupConsumer) fetchAnswered(resp kmsg.Response, err error) {
	op := g.op
	g.busy, g.op = false, nil
	if err != nil {
		// A read that got no answer changed nothing: fail.
		g.stats.FetchesFailed++
		op.Fail(err.Error())
		g.backOff()
		return
	}
	answer := resp.(*kmsg.FetchResponse)
	if answer.ErrorCode != 0 {
		g.stats.FetchesFailed++
		op.Fail(kerr.ErrorForCode(answer.ErrorCode).Error())
		if metadataIsStale(answer.ErrorCode) {
			g.refreshAndBackOff()
			return
		}
		g.backOff()
		return
	}
	polls, troubled, refresh := g.readFetchAnswer(answer)
	op.OK(history.Payload{Polls: polls})
	switch {
	case refresh:
		g.stats.Errors++
		g.refreshAndBackOff()
	case troubled:
		g.stats.Errors++
		g.backOff()
	default:
		g.schedule(0)
	}
}

// readFetchAnswer reads a fetch answer (readFetchAnswer in
// fetch_answers.go) into the group's positions.
func (g *GroupConsumer) readFetchAnswer(resp *kmsg.FetchResponse) (polls []history.Poll, troubled, refresh bool) {
	read := readFetchAnswer(g.client, &g.fetching, resp, func(tp history.TopicPartition) *readPosition {
		return &g.membership.positions[tp].readPosition
	}, g.logStarts.saw)
	g.stats.Records += read.records
	g.stats.PollsEmpty += read.pollsEmpty
	g.stats.OutOfRange += read.outOfRange
	g.stats.CorruptAnswers += read.corrupt
	return read.polls, read.troubled, read.refresh
}
