package harness

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/twmb/franz-go/pkg/kgo"

	"sluice/jepsen/history"
)

// assignConsumer reads every partition by assignment (no group), from the
// start, as one process: an assign op, then one poll op per PollFetches
// that returned records, each naming the position it read from so that
// the checkers can tell a skip inside a poll from one between polls.
type assignConsumer struct {
	client     *kgo.Client
	log        *historyLog
	topic      string
	partitions int32

	polled  atomic.Int64 // records received
	running sync.WaitGroup
}

func newAssignConsumer(cluster *Cluster, log *historyLog, topic string, partitions int32) (*assignConsumer, error) {
	offsets := map[int32]kgo.Offset{}
	for partition := range partitions {
		offsets[partition] = kgo.NewOffset().AtStart()
	}
	client, err := kgo.NewClient(cluster.ClientOptions(
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: offsets}),
		kgo.FetchMaxWait(consumerFetchWaitMax),
	)...)
	if err != nil {
		return nil, fmt.Errorf("harness: assign consumer: %w", err)
	}
	return &assignConsumer{client: client, log: log, topic: topic, partitions: partitions}, nil
}

func (c *assignConsumer) start(ctx context.Context, failed func(error)) {
	c.running.Add(1)
	go func() {
		defer c.running.Done()
		if err := c.run(ctx); err != nil {
			failed(err)
		}
	}()
}

func (c *assignConsumer) run(ctx context.Context) error {
	process := c.log.newProcess()
	var assigned []history.TopicPartition
	for partition := range c.partitions {
		assigned = append(assigned, history.TopicPartition{Topic: c.topic, Partition: partition})
	}
	op, err := c.log.invoke(process, history.FuncAssign, history.Payload{Assigned: assigned})
	if err != nil {
		return err
	}
	op.ok(history.Payload{Assigned: assigned})
	positions := map[int32]int64{}
	for ctx.Err() == nil {
		if _, err := pollOnce(ctx, c.client, c.log, process, positions, &c.polled); err != nil {
			return err
		}
	}
	return nil
}

// pollOnce is one poll op of an assign-style consumer: invoke, then
// PollFetches for at most consumerPollTimeout, then ok with the records
// received per partition, each from the position tracked in positions
// (which it advances). Partitions that returned nothing are left out: an
// empty answer from kgo says nothing about the log. It returns how many
// records arrived.
func pollOnce(ctx context.Context, client *kgo.Client, log *historyLog, process int, positions map[int32]int64, polled *atomic.Int64) (int, error) {
	op, err := log.invoke(process, history.FuncPoll, history.Payload{})
	if err != nil {
		return 0, err
	}
	pollContext, cancel := context.WithTimeout(ctx, consumerPollTimeout)
	fetches := client.PollFetches(pollContext)
	cancel()
	polls, received := pollsOf(fetches, positions)
	op.ok(history.Payload{Polls: polls})
	polled.Add(int64(received))
	return received, nil
}

// pollsOf turns fetches into the history's polls, in partition order.
// When positions is non-nil, each poll's From is the tracked position,
// which then moves past the last record.
func pollsOf(fetches kgo.Fetches, positions map[int32]int64) ([]history.Poll, int) {
	byPartition := map[history.TopicPartition][]history.Record{}
	var order []history.TopicPartition
	received := 0
	fetches.EachRecord(func(r *kgo.Record) {
		tp := history.TopicPartition{Topic: r.Topic, Partition: r.Partition}
		if _, seen := byPartition[tp]; !seen {
			order = append(order, tp)
		}
		byPartition[tp] = append(byPartition[tp], history.Record{Offset: r.Offset, Key: string(r.Key), Value: string(r.Value)})
		received++
	})
	sortPartitions(order)
	var polls []history.Poll
	for _, tp := range order {
		records := byPartition[tp]
		from := history.OffsetUnknown
		if positions != nil {
			from = positions[tp.Partition]
			positions[tp.Partition] = records[len(records)-1].Offset + 1
		}
		polls = append(polls, history.Poll{Partition: tp, From: from, Records: records})
	}
	return polls, received
}

func (c *assignConsumer) stop() {
	c.running.Wait()
	c.client.Close()
}
