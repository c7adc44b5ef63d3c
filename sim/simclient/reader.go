package simclient

import (
	"fmt"
	"slices"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"sluice/jepsen/history"
)

// FetchConfig is how a consumer fetches: the settings the Reader and the
// GroupConsumer share. Zero values take the defaults in limits.go.
type FetchConfig struct {
	FetchMaxWait      time.Duration // fetch.max.wait.ms
	FetchMaxBytes     int32         // fetch.max.bytes
	PartitionMaxBytes int32         // max.partition.fetch.bytes
	RetryBackoff      time.Duration // retry.backoff.ms
}

// ReaderConfig is a reader's settings: a reader has only its fetches to
// configure.
type ReaderConfig = FetchConfig

func (c FetchConfig) withDefaults() FetchConfig {
	if c.FetchMaxWait <= 0 {
		c.FetchMaxWait = fetchMaxWaitDefault
	}
	if c.FetchMaxBytes <= 0 {
		c.FetchMaxBytes = fetchMaxBytesDefault
	}
	if c.PartitionMaxBytes <= 0 {
		c.PartitionMaxBytes = partitionMaxBytesDefault
	}
	if c.RetryBackoff <= 0 {
		c.RetryBackoff = retryBackoffDefault
	}
	return c
}

// Reader is a consumer by assignment (no group): it reads a fixed set of
// partitions from the earliest offset on, one request at a time, and
// records every fetch as a poll in the history. A position reset (after
// OFFSET_OUT_OF_RANGE) is recorded as a seek, so the checkers do not read
// the jump back as a nonmonotonic poll.
type Reader struct {
	client    *Client
	config    ReaderConfig
	recorder  *history.Recorder
	processes *Processes
	// process is the history process of the reader's operations; it
	// changes after an info (a crash with a poll in flight).
	process int

	// assigned is what Assign was given, sorted; it survives a crash
	// (it is the program's configuration) and is re-assigned at restart.
	assigned  []history.TopicPartition
	positions map[history.TopicPartition]*position // lookups only

	requestInFlight bool
	stepScheduled   bool
	// stepEvent is what a step event runs, made once: the loop schedules
	// it after every request, and a closure made for each was an
	// allocation.
	stepEvent  func()
	stopped    bool
	leaderNext int // round robin among leaders to fetch from
	leaders    leaderGroups
	// fetchable is step's list of the partitions to fetch, kept for the
	// next step: fetch reads it and keeps nothing of it.
	fetchable []history.TopicPartition
	poll      *history.Pending
	// fetching is what fetches are built and read with (see
	// fetchBuffers); fetchAnsweredEvent is fetchAnswered, made once.
	fetching           fetchBuffers
	fetchAnsweredEvent func(kmsg.Response, error)
	drain              *drain
	stats              ReaderStats
	// logStarts are the highest log start offsets answers showed (see
	// LogStart).
	logStarts logStarts
}

// position is where the reader is in one partition.
type position struct {
	// readPosition's offset is history.OffsetUnknown until ListOffsets
	// has said where the earliest is.
	readPosition
	// target is where a drain stops: the high watermark when it began,
	// history.OffsetUnknown until known.
	target int64
}

// drain is a Drain in progress.
type drain struct {
	done func()
}

// ReaderStats counts what a reader did.
type ReaderStats struct {
	Fetches, FetchesFailed    int64
	RecordsRead, PollsEmpty   int64
	OutOfRange, Seeks         int64
	CorruptAnswers            int64
	ListOffsets, Errors       int64
	LostToCrash, DrainsPassed int64
}

// NewReader builds a reader on a client. It reads nothing until Assign.
func NewReader(c *Client, config ReaderConfig, recorder *history.Recorder, processes *Processes) *Reader {
	r := &Reader{client: c, config: config.withDefaults(), recorder: recorder, processes: processes}
	r.stepEvent = func() {
		r.stepScheduled = false
		r.step()
	}
	r.fetchAnsweredEvent = r.fetchAnswered
	r.process = processes.Next()
	r.positions = map[history.TopicPartition]*position{}
	r.logStarts = logStarts{}
	c.OnCrash(r.crashed)
	c.OnRestart(r.restarted)
	return r
}

// Stats returns the reader's counters.
func (r *Reader) Stats() ReaderStats { return r.stats }

// Assign sets the partitions the reader reads, each from its earliest
// offset, and records the assignment. It starts the fetch loop.
func (r *Reader) Assign(partitions []history.TopicPartition) error {
	if len(partitions) == 0 || len(partitions) > assignedPartitionsMax {
		return fmt.Errorf("simclient: assign %d partitions; a reader reads 1 to %d", len(partitions), assignedPartitionsMax)
	}
	assigned := slices.Clone(partitions)
	slices.SortFunc(assigned, history.TopicPartition.Compare)
	assigned = slices.Compact(assigned)
	op, err := r.recorder.Invoke(r.process, history.FuncAssign, history.Payload{Assigned: assigned})
	if err != nil {
		return err
	}
	op.OK(history.Payload{Assigned: assigned})
	r.assigned = assigned
	r.positions = map[history.TopicPartition]*position{}
	for _, tp := range assigned {
		r.positions[tp] = &position{readPosition: readPosition{offset: history.OffsetUnknown}, target: history.OffsetUnknown}
		r.client.WantTopic(tp.Topic)
	}
	r.stopped = false
	r.schedule(0)
	return nil
}

// Stop ends the fetch loop once the request in flight, if any, is done.
func (r *Reader) Stop() { r.stopped = true }

// Idle reports whether no request is in flight.
func (r *Reader) Idle() bool { return !r.requestInFlight }

// Position is the next offset the reader reads from tp, OffsetUnknown if
// it does not know yet.
func (r *Reader) Position(tp history.TopicPartition) int64 {
	if p := r.positions[tp]; p != nil {
		return p.offset
	}
	return history.OffsetUnknown
}

// LogStart is the highest log start offset of tp that any answer this
// reader got showed (fetch answers carry the leader's; ListOffsets
// earliest is it), or 0: below it, retention deleted the records.
func (r *Reader) LogStart(tp history.TopicPartition) int64 { return r.logStarts[tp] }

// sawLogStart notes a log start offset an answer showed.
func (r *Reader) sawLogStart(tp history.TopicPartition, offset int64) { r.logStarts.saw(tp, offset) }

// Drain reads every assigned partition from its position up to the high
// watermark it has when the drain begins, then calls done (from a later
// event). It restarts the fetch loop if it was stopped, and stops it once
// the drain is done. A crash abandons the drain: done is never called.
func (r *Reader) Drain(done func()) {
	r.drain = &drain{done: done}
	for _, tp := range r.assigned {
		r.positions[tp].target = history.OffsetUnknown
	}
	r.stopped = false
	r.schedule(0)
}

// schedule runs the loop's next step after delay, unless a step or a
// request is already pending.
func (r *Reader) schedule(delay time.Duration) {
	if r.stepScheduled || r.requestInFlight {
		return
	}
	r.stepScheduled = true
	r.client.After(delay, "simclient.reader-step", r.stepEvent)
}

// step sends the next request: ListOffsets where a position or a drain
// target is unknown, else a fetch from one leader.
func (r *Reader) step() {
	if r.stopped || r.requestInFlight || !r.client.Alive() {
		return
	}
	if tps := r.unknown(func(p *position) bool { return p.offset == history.OffsetUnknown }); len(tps) > 0 {
		r.listOffsets(tps, timestampEarliest)
		return
	}
	if r.drain != nil {
		if tps := r.unknown(func(p *position) bool { return p.target == history.OffsetUnknown }); len(tps) > 0 {
			r.listOffsets(tps, timestampLatest)
			return
		}
	}
	fetchable := r.fetchable[:0]
	for _, tp := range r.assigned {
		if p := r.positions[tp]; r.drain == nil || p.offset < p.target {
			fetchable = append(fetchable, tp)
		}
	}
	r.fetchable = fetchable
	if len(fetchable) == 0 {
		// Only a drain leaves nothing to fetch: it is complete.
		d := r.drain
		r.drain = nil
		r.stopped = true
		r.stats.DrainsPassed++
		r.client.note("drain complete")
		r.client.later(d.done)
		return
	}
	r.fetch(fetchable)
}

// unknown lists the assigned partitions whose position matches.
func (r *Reader) unknown(match func(*position) bool) []history.TopicPartition {
	var tps []history.TopicPartition
	for _, tp := range r.assigned {
		if match(r.positions[tp]) {
			tps = append(tps, tp)
		}
	}
	return tps
}

// byLeader groups partitions by their leader, leaders in ascending order,
// and reports whether some partition's leader is unknown.
func (r *Reader) byLeader(tps []history.TopicPartition) (groups []leaderPartitions, missing bool) {
	return r.leaders.group(r.client, tps)
}

// backOff waits, refreshing metadata first when refresh is set, then steps.
func (r *Reader) backOff(refresh bool) {
	if !refresh {
		r.schedule(jitter(r.client, r.config.RetryBackoff))
		return
	}
	r.requestInFlight = true
	r.client.RefreshMetadata(func(error) {
		r.requestInFlight = false
		r.schedule(jitter(r.client, r.config.RetryBackoff))
	})
}

// crashed records the poll in flight as info (the process died with it),
// or records the crash itself, then forgets every position.
func (r *Reader) crashed() {
	if r.poll != nil {
		r.poll.Info("client crashed with the poll in flight")
		r.poll = nil
		r.stats.LostToCrash++
	} else if op, err := r.recorder.Invoke(r.process, history.FuncCrash, history.Payload{}); err == nil {
		op.Info("client crashed")
	}
	r.process = r.processes.Next()
	r.positions = map[history.TopicPartition]*position{}
	r.requestInFlight, r.stepScheduled, r.drain = false, false, nil
}

// restarted assigns the same partitions again: a restarted consumer
// without a group starts over from the earliest offsets.
func (r *Reader) restarted() {
	if len(r.assigned) > 0 && !r.stopped {
		if err := r.Assign(r.assigned); err != nil {
			panic(fmt.Sprintf("simclient: %s cannot re-assign after restart: %v", r.client.Name(), err))
		}
	}
}
