package harness

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

// CreateTopic creates topic through client, retrying while the cluster
// cannot yet (no active controller, too few unfenced brokers), until ctx
// ends. A topic that already exists counts as created, so a retry after
// an answer lost in transit does not fail.
func CreateTopic(ctx context.Context, client *kgo.Client, topic string, partitions int32, replicationFactor int16, configs map[string]string) (time.Duration, error) {
	started := time.Now()
	admin := kadm.NewClient(client)
	var last error
	for {
		configPointers := map[string]*string{}
		for key, value := range configs {
			configPointers[key] = &value
		}
		created, err := admin.CreateTopic(ctx, partitions, replicationFactor, configPointers, topic)
		if err == nil {
			err = created.Err
		}
		if err == nil || errors.Is(err, kerr.TopicAlreadyExists) {
			return time.Since(started), nil
		}
		last = err
		select {
		case <-ctx.Done():
			return time.Since(started), fmt.Errorf("harness: creating topic %s: %w (last error: %v)", topic, ctx.Err(), last)
		case <-time.After(adminRetryDelay):
		}
	}
}
