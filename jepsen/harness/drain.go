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
func finalDrain(ctx context.Context, cluster *Cluster, log *historyLog, topic string, partitions int32, timeout time.Duration) (int64, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	ends, err := endOffsets(ctx, cluster, topic)
	if err != nil {
		return 0, err
	}
	consumer, err := newAssignConsumer(cluster, log, topic, partitions)
	if err != nil {
		return 0, err
	}
	defer consumer.client.Close()
	process := log.newProcess()
	positions := map[int32]int64{}
	var read atomic.Int64
	for {
		done := true
		for partition := range partitions {
			if positions[partition] < ends[partition] {
				done = false
			}
		}
		if done {
			return read.Load(), nil
		}
		if ctx.Err() != nil {
			return read.Load(), fmt.Errorf("harness: the final read reached %v of end offsets %v within %v", positions, ends, timeout)
		}
		if _, err := pollOnce(ctx, consumer.client, log, process, positions, &read); err != nil {
			return read.Load(), err
		}
	}
}

// endOffsets asks for every partition's end offset until the cluster
// answers for all of them.
func endOffsets(ctx context.Context, cluster *Cluster, topic string) (map[int32]int64, error) {
	client, err := kgo.NewClient(cluster.ClientOptions()...)
	if err != nil {
		return nil, err
	}
	defer client.Close()
	admin := kadm.NewClient(client)
	for {
		listed, err := admin.ListEndOffsets(ctx, topic)
		if err == nil {
			err = listed.Error()
		}
		if err == nil {
			ends := map[int32]int64{}
			listed.Each(func(o kadm.ListedOffset) { ends[o.Partition] = o.Offset })
			return ends, nil
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("harness: end offsets of %s: %w", topic, err)
		case <-time.After(adminRetryDelay):
		}
	}
}
