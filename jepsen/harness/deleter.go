package harness

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"sluice/jepsen/checker"
	"sluice/jepsen/history"
)

// deleter is an operator deleting what the group has consumed: every
// Workload.DeleteEvery it reads the group's committed offset of the next
// partition (round robin) and sends DeleteRecords up to it. An answer with
// a low watermark is a promise the checker holds the history to
// (deleted-records-served: no poll invoked after it returns a record below
// it); every offset it asked for, answered or not, may have been deleted,
// so the checks of what was never read permit the records below it.
type deleter struct {
	client     *kgo.Client
	log        *historyLog
	group      string
	topic      string
	partitions int32
	every      time.Duration
	background

	mutex     sync.Mutex
	requested map[int32]int64
	answered  []checker.DeleteAnswered
	sent, ok  atomic.Int64
}

func newDeleter(cluster *Cluster, log *historyLog, group, topic string, partitions int32, every time.Duration) (*deleter, error) {
	client, err := kgo.NewClient(cluster.ClientOptions()...)
	if err != nil {
		return nil, fmt.Errorf("harness: deleter: %w", err)
	}
	return &deleter{client: client, log: log, group: group, topic: topic, partitions: partitions, every: every, requested: map[int32]int64{}}, nil
}

func (d *deleter) start(ctx context.Context) { d.background.start(ctx, d.run) }

// run deletes until ctx ends. Failures (no coordinator, no leader, a
// timeout) are the faults at work: the next round tries again.
func (d *deleter) run(ctx context.Context) {
	admin := kadm.NewClient(d.client)
	ticker := time.NewTicker(d.every)
	defer ticker.Stop()
	for next := int32(0); ; next = (next + 1) % d.partitions {
		select {
		case <-ctx.Done():
			return
		case <-ticker.C:
		}
		d.deleteConsumed(ctx, admin, next)
	}
}

// deleteConsumed deletes partition's records below the group's committed
// offset, if it has one.
func (d *deleter) deleteConsumed(ctx context.Context, admin *kadm.Client, partition int32) {
	requestContext, cancel := context.WithTimeout(ctx, adminRequestTimeout)
	defer cancel()
	committed, err := admin.FetchOffsets(requestContext, d.group)
	if err != nil {
		return
	}
	offset, found := committed.Lookup(d.topic, partition)
	if !found || offset.Err != nil || offset.At <= 0 {
		return
	}
	d.mutex.Lock()
	d.requested[partition] = max(d.requested[partition], offset.At)
	d.mutex.Unlock()
	d.sent.Add(1)
	offsets := kadm.Offsets{}
	offsets.Add(kadm.Offset{Topic: d.topic, Partition: partition, At: offset.At})
	deleted, err := admin.DeleteRecords(requestContext, offsets)
	if err != nil {
		return
	}
	answer, found := deleted.Lookup(d.topic, partition)
	if !found || answer.Err != nil || answer.LowWatermark < 0 {
		return
	}
	at := int64(d.log.since())
	// The promise held to is what this request deleted: below the offset
	// asked for, which the group had consumed. The low watermark may be
	// higher (an earlier deletion, or retention, moved every replica's
	// start further), and records there may still sit in a lagging
	// consumer's buffer, fetched before they went, to come out of a poll
	// invoked after the answer: the history knows when a poll began, not
	// when its records were fetched.
	d.mutex.Lock()
	d.answered = append(d.answered, checker.DeleteAnswered{
		Partition: history.TopicPartition{Topic: d.topic, Partition: partition}, LowWatermark: min(answer.LowWatermark, offset.At), At: at,
	})
	d.mutex.Unlock()
	d.ok.Add(1)
}

func (d *deleter) stop() {
	d.wait()
	d.client.Close()
}

// options adds what the deleter did to the checker's options.
func (d *deleter) options(options *checker.Options) {
	d.mutex.Lock()
	defer d.mutex.Unlock()
	for partition := range d.partitions {
		if below := d.requested[partition]; below > 0 {
			options.Deleted = append(options.Deleted, checker.DeletedBelow{
				Partition: history.TopicPartition{Topic: d.topic, Partition: partition}, Offset: below,
			})
		}
	}
	options.DeletesAnswered = append(options.DeletesAnswered, d.answered...)
}
