package compat

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// TestTopicCompressionTypeIsReadByClients: a topic created with kadm and
// compression.type=zstd or lz4 takes kgo's snappy batches, stores them
// rewritten in its own codec, and kgo reads every record back in order;
// DescribeConfigs reports the codec set.
func TestTopicCompressionTypeIsReadByClients(t *testing.T) {
	t.Parallel()
	broker := StartBroker(t, Options{})
	ctx, cancel := context.WithTimeout(context.Background(), clientTimeout)
	defer cancel()
	admin := kadm.NewClient(newFranzGoClient(t, broker.Addr()))
	for _, codec := range []string{"zstd", "lz4", "uncompressed"} {
		topic := "rewritten-" + codec
		created, err := admin.CreateTopic(ctx, 1, 1, map[string]*string{"compression.type": &codec}, topic)
		if err == nil {
			err = created.Err
		}
		if err != nil {
			t.Fatalf("create %s: %v", topic, err)
		}
		producer := newFranzGoClient(t, broker.Addr(), kgo.DefaultProduceTopic(topic), kgo.ProducerBatchCompression(kgo.SnappyCompression()))
		var want []string
		for i := range 20 {
			want = append(want, fmt.Sprintf("%s-%d", codec, i))
			producer.Produce(ctx, &kgo.Record{Value: []byte(want[i])}, nil)
		}
		if err := producer.Flush(ctx); err != nil {
			t.Fatalf("%s: flush: %v", topic, err)
		}
		consumer := newFranzGoClient(t, broker.Addr(), kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
		var got []string
		for len(got) < len(want) && ctx.Err() == nil {
			fetches := consumer.PollFetches(ctx)
			for _, e := range fetches.Errors() {
				t.Fatalf("%s: fetch: %v", topic, e.Err)
			}
			fetches.EachRecord(func(r *kgo.Record) { got = append(got, string(r.Value)) })
		}
		if !slices.Equal(got, want) {
			t.Fatalf("%s: read %v, want %v", topic, got, want)
		}
		configs, err := admin.DescribeTopicConfigs(ctx, topic)
		if err != nil {
			t.Fatal(err)
		}
		value, err := configs.On(topic, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, config := range value.Configs {
			if config.Key == "compression.type" && (config.Value == nil || *config.Value != codec) {
				t.Fatalf("%s: compression.type described as %v, want %s", topic, config.Value, codec)
			}
		}
	}
}
