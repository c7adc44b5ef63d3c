package checker

import (
	"fmt"
	"slices"

	"sluice/jepsen/history"
)

// correctHistory builds the history of a correct system: one log per
// partition, producers whose sends take effect at a moment between their
// invoke and their completion, and consumers that read in order from their
// position at the moment their poll completes. choose(n) picks a number in
// [0, n); it is rapid's draw in property tests and a seeded PRNG in
// benchmarks. The history stops growing after steps steps; then, if
// drain, a fresh consumer drains every partition: it reads everything from
// offset 0 and then polls once more to find nothing.
func correctHistory(choose func(n int) int, partitions, steps int, drain bool) []history.Op {
	g := &generator{choose: choose, logs: make([][]string, partitions)}
	g.recorder = history.NewRecorder(func() int64 {
		g.now++
		return g.now
	})
	for range 3 {
		g.producers = append(g.producers, &producer{process: g.newProcess()})
	}
	for range 2 {
		g.consumers = append(g.consumers, g.newConsumer())
	}
	// Two acknowledged sends to partition 0 first, so every history has
	// values for a mutation to move.
	for range 2 {
		g.invokeSend(g.producers[0], 0)
		g.takeEffect(g.producers[0])
		g.completeSend(g.producers[0], true)
	}
	for range steps {
		g.step()
	}
	if drain {
		g.drain()
	}
	return g.recorder.History()
}

type generator struct {
	choose    func(n int) int
	recorder  *history.Recorder
	now       int64
	logs      [][]string // per partition, the values in offset order
	producers []*producer
	consumers []*consumer
	processes int
	values    int
}

type producer struct {
	process   int
	pending   *history.Pending
	partition int
	value     string
	appended  bool
	offset    int64
}

type consumer struct {
	process   int
	pending   *history.Pending
	positions []int64 // per partition
}

func (g *generator) newProcess() int {
	g.processes++
	return g.processes - 1
}

func (g *generator) newConsumer() *consumer {
	return &consumer{process: g.newProcess(), positions: make([]int64, len(g.logs))}
}

func partitionName(partition int) history.TopicPartition {
	return history.TopicPartition{Topic: "t", Partition: int32(partition)}
}

func (g *generator) step() {
	p := g.producers[g.choose(len(g.producers))]
	c := g.consumers[g.choose(len(g.consumers))]
	switch g.choose(7) {
	case 0, 1:
		if p.pending == nil {
			g.invokeSend(p, g.choose(len(g.logs)))
		}
	case 2:
		if p.pending != nil && !p.appended {
			g.takeEffect(p)
		}
	case 3:
		if p.pending != nil {
			g.completeSend(p, g.choose(4) > 0)
		}
	case 4:
		if c.pending == nil {
			c.pending = g.invoke(c.process, history.FuncPoll, history.Payload{})
		}
	case 5:
		if c.pending != nil {
			g.completePoll(c)
		}
	case 6:
		// A consumer's poll times out: the client restarts as a new
		// process from some earlier position, as after a crash.
		if c.pending != nil && g.choose(3) == 0 {
			c.pending.Info("timed out")
			c.pending = nil
			c.process = g.newProcess()
			for i := range c.positions {
				c.positions[i] = int64(g.choose(int(c.positions[i]) + 1))
			}
		}
	}
}

func (g *generator) invoke(process int, f history.Func, payload history.Payload) *history.Pending {
	pending, err := g.recorder.Invoke(process, f, payload)
	if err != nil {
		panic(err)
	}
	return pending
}

func (g *generator) invokeSend(p *producer, partition int) {
	g.values++
	p.value = fmt.Sprintf("v%d", g.values)
	p.partition = partition
	p.appended = false
	p.pending = g.invoke(p.process, history.FuncSend, history.Payload{Sends: []history.Send{
		{Partition: partitionName(partition), Value: p.value, Offset: history.OffsetUnknown}}})
}

// takeEffect is the send's linearization point: the value joins the log.
func (g *generator) takeEffect(p *producer) {
	p.offset = int64(len(g.logs[p.partition]))
	g.logs[p.partition] = append(g.logs[p.partition], p.value)
	p.appended = true
}

// completeSend acknowledges an appended send, or, when told to or when
// the send never took effect, ends it as info or fail.
func (g *generator) completeSend(p *producer, acknowledge bool) {
	switch {
	case p.appended && acknowledge:
		p.pending.OK(history.Payload{Sends: []history.Send{
			{Partition: partitionName(p.partition), Value: p.value, Offset: p.offset}}})
	case !p.appended && acknowledge:
		p.pending.Fail("not leader")
	default:
		p.pending.Info("timed out")
		p.process = g.newProcess()
	}
	p.pending = nil
}

// completePoll reads up to four records of every partition from the
// consumer's positions. Reading happens at the completion, which is
// inside the poll's interval.
func (g *generator) completePoll(c *consumer) {
	var polls []history.Poll
	for partition, log := range g.logs {
		from := c.positions[partition]
		count := min(int64(g.choose(5)), int64(len(log))-from)
		var received []history.Record
		for offset := from; offset < from+count; offset++ {
			received = append(received, history.Record{Offset: offset, Value: log[offset]})
		}
		c.positions[partition] += count
		// An empty poll says the log ends at its position only when it
		// does; a client that merely got nothing in time does not know.
		if count == 0 && from < int64(len(log)) {
			from = history.OffsetUnknown
		}
		polls = append(polls, history.Poll{Partition: partitionName(partition), From: from, Records: received})
	}
	c.pending.OK(history.Payload{Polls: polls})
	c.pending = nil
}

func (g *generator) drain() {
	drainer := g.newConsumer()
	for range 2 {
		var polls []history.Poll
		for partition, log := range g.logs {
			from := drainer.positions[partition]
			var received []history.Record
			for offset := from; offset < int64(len(log)); offset++ {
				received = append(received, history.Record{Offset: offset, Value: log[offset]})
			}
			drainer.positions[partition] = int64(len(log))
			polls = append(polls, history.Poll{Partition: partitionName(partition), From: from, Records: received})
		}
		g.invoke(drainer.process, history.FuncPoll, history.Payload{}).OK(history.Payload{Polls: polls})
	}
}

// recordPlace locates one record of one poll in a history.
type recordPlace struct{ op, poll, record int }

// acknowledgedOffsets maps each value an ok send acknowledged at a known
// offset to that offset.
func acknowledgedOffsets(ops []history.Op) map[string]int64 {
	acknowledged := map[string]int64{}
	for _, op := range ops {
		if op.F == history.FuncSend && op.Type == history.OK {
			for _, send := range op.Sends {
				if send.Offset != history.OffsetUnknown {
					acknowledged[send.Value] = send.Offset
				}
			}
		}
	}
	return acknowledged
}

// acknowledgedRecords lists, in history order, the polled records whose
// value an ok send acknowledged: records whose offset the checkers know
// independently of the poll.
func acknowledgedRecords(ops []history.Op) []recordPlace {
	acknowledged := acknowledgedOffsets(ops)
	var places []recordPlace
	for i, op := range ops {
		for j, poll := range op.Polls {
			for k, record := range poll.Records {
				if _, ok := acknowledged[record.Value]; ok {
					places = append(places, recordPlace{i, j, k})
				}
			}
		}
	}
	return places
}

// withRecords returns ops with the records of one poll replaced, leaving
// the original history untouched.
func withRecords(ops []history.Op, op, poll int, received []history.Record) []history.Op {
	mutated := slices.Clone(ops)
	mutated[op].Polls = slices.Clone(mutated[op].Polls)
	mutated[op].Polls[poll].Records = received
	return mutated
}
