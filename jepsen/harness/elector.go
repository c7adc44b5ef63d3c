package harness

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

// elector is an operator running preferred leader elections
// (kafka-leader-election.sh --election-type preferred) for every partition
// of the workload's topic, every Workload.ElectEvery, while the nemesis
// moves leadership away. A preferred election is a clean one, so the
// checkers hold the history to every promise as before. An answer Kafka's
// controller never gives is a problem of the run.
type elector struct {
	client     *kgo.Client
	topic      string
	partitions int32
	every      time.Duration
	background

	sent, elected atomic.Int64
	mutex         sync.Mutex
	unexpected    []string
}

func newElector(cluster *Cluster, topic string, partitions int32, every time.Duration) (*elector, error) {
	client, err := kgo.NewClient(cluster.ClientOptions()...)
	if err != nil {
		return nil, fmt.Errorf("harness: elector: %w", err)
	}
	return &elector{client: client, topic: topic, partitions: partitions, every: every}, nil
}

func (e *elector) start(ctx context.Context) { e.background.start(ctx, e.run) }

// run elects until ctx ends. A failed request (no controller, a timeout)
// is the faults at work: the next round tries again.
func (e *elector) run(ctx context.Context) {
	admin := kadm.NewClient(e.client)
	ticker := time.NewTicker(e.every)
	defer ticker.Stop()
	partitions := kadm.TopicsSet{}
	for p := range e.partitions {
		partitions.Add(e.topic, p)
	}
	for {
		select {
		case <-ctx.Done():
			return
		case <-ticker.C:
		}
		requestContext, cancel := context.WithTimeout(ctx, adminRequestTimeout)
		e.sent.Add(1)
		results, err := admin.ElectLeaders(requestContext, kadm.ElectPreferredReplica, partitions)
		cancel()
		if err != nil {
			continue
		}
		for _, byPartition := range results {
			for _, r := range byPartition {
				switch {
				case r.Err == nil:
					e.elected.Add(1)
				case errors.Is(r.Err, kerr.ElectionNotNeeded), errors.Is(r.Err, kerr.PreferredLeaderNotAvailable):
				case kerr.IsRetriable(r.Err):
				default:
					e.mutex.Lock()
					e.unexpected = append(e.unexpected, fmt.Sprintf("ElectLeaders answered %s-%d: %v %s", r.Topic, r.Partition, r.Err, r.ErrMessage))
					e.mutex.Unlock()
				}
			}
		}
	}
}

func (e *elector) stop() {
	e.wait()
	e.client.Close()
}

// problems are the answers Kafka's controller never gives.
func (e *elector) problems() []string {
	e.mutex.Lock()
	defer e.mutex.Unlock()
	return append([]string(nil), e.unexpected...)
}
