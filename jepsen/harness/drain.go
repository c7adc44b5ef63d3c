package harness

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// finalDrain reads every partition from its start to its end offset (as
// ListOffsets says once the cluster has recovered and the writers have
// stopped) with a fresh assign consumer, recording its polls. It returns
// the records read, and an error if the end was not reached in time: a
// value then still unseen cannot be called lost.
//
// A partition whose log start has reached its end holds nothing left to
// read — DeleteRecords took everything the group had consumed — and is
// done as it is: a consumer there waits at the end for good. Log starts
// are listed again whenever a poll brings nothing, at most every
// drainStartsRefresh, because a DeleteRecords whose answer the deleter
// gave up on may still complete after the writers stopped.
func finalDrain(ctx context.Context, cluster *Cluster, log *historyLog, topic string, partitions int32, timeout time.Duration) (int64, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	ends, err := listOffsets(ctx, cluster, topic, (*kadm.Client).ListEndOffsets)
	if err != nil {
		return 0, err
	}
	starts, err := listOffsets(ctx, cluster, topic, (*kadm.Client).ListStartOffsets)
	if err != nil {
		return 0, err
	}
	startsListed := time.Now()
	consumer, err := newAssignConsumer(cluster, log, topic, partitions)
	if err != nil {
		return 0, err
	}
	defer consumer.client.Close()
	process := log.newProcess()
	positions := map[int32]int64{}
	var read atomic.Int64
	for {
		if drained(partitions, positions, starts, ends) {
			return read.Load(), nil
		}
		if ctx.Err() != nil {
			return read.Load(), fmt.Errorf("harness: the final read reached %v of end offsets %v (log starts %v) within %v", positions, ends, starts, timeout)
		}
		received, err := pollOnce(ctx, consumer.client, log, process, positions, &read)
		if err != nil {
			return read.Load(), err
		}
		if received == 0 && time.Since(startsListed) >= drainStartsRefresh {
			if listed, err := listOffsets(ctx, cluster, topic, (*kadm.Client).ListStartOffsets); err == nil {
				starts, startsListed = listed, time.Now()
			}
		}
	}
}

// drained reports whether every partition was read to its end, or has
// nothing left to read below it.
func drained(partitions int32, positions, starts, ends map[int32]int64) bool {
	for partition := range partitions {
		end := ends[partition]
		if positions[partition] < end && starts[partition] < end {
			return false
		}
	}
	return true
}

// listOffsets asks for every partition's start or end offset (list is
// kadm's ListStartOffsets or ListEndOffsets) until the cluster answers
// for all of them.
func listOffsets(ctx context.Context, cluster *Cluster, topic string, list func(*kadm.Client, context.Context, ...string) (kadm.ListedOffsets, error)) (map[int32]int64, error) {
	client, err := kgo.NewClient(cluster.ClientOptions()...)
	if err != nil {
		return nil, err
	}
	defer client.Close()
	admin := kadm.NewClient(client)
	for {
		listed, err := list(admin, ctx, topic)
		if err == nil {
			err = listed.Error()
		}
		if err == nil {
			offsets := map[int32]int64{}
			listed.Each(func(o kadm.ListedOffset) { offsets[o.Partition] = o.Offset })
			return offsets, nil
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("harness: offsets of %s: %w", topic, err)
		case <-time.After(adminRetryDelay):
		}
	}
}
