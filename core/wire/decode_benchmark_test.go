package wire

import (
	"bytes"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// BenchmarkDecodeRequest decodes a produce frame carrying a 1 MiB batch
// and a fetch frame asking for 100 partitions, and reports each against a
// plain copy of the same bytes measured in the same run (decode/copy): a
// produce's records are opaque on the hot path, so its decode should cost
// little more than moving its bytes once.
func BenchmarkDecodeRequest(b *testing.B) {
	produce := kmsg.NewPtrProduceRequest()
	produce.Version, produce.Acks, produce.TimeoutMillis = 9, -1, 30_000
	topic := kmsg.NewProduceRequestTopic()
	topic.Topic = "bench"
	partition := kmsg.NewProduceRequestTopicPartition()
	partition.Records = bytes.Repeat([]byte{0xab}, 1<<20)
	topic.Partitions = append(topic.Partitions, partition)
	produce.Topics = append(produce.Topics, topic)

	fetch := kmsg.NewPtrFetchRequest()
	fetch.Version, fetch.MaxWaitMillis, fetch.MaxBytes = 12, 500, 50<<20
	fetchTopic := kmsg.NewFetchRequestTopic()
	fetchTopic.Topic = "bench"
	for p := range int32(100) {
		fetchPartition := kmsg.NewFetchRequestTopicPartition()
		fetchPartition.Partition, fetchPartition.FetchOffset, fetchPartition.PartitionMaxBytes = p, 1000, 1<<20
		fetchTopic.Partitions = append(fetchTopic.Partitions, fetchPartition)
	}
	fetch.Topics = append(fetch.Topics, fetchTopic)

	for _, c := range []struct {
		name string
		req  kmsg.Request
	}{{"produce-1MiB", produce}, {"fetch-100-partitions", fetch}} {
		frame := AppendRequest(nil, 1, "bench", c.req)
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(frame)))
			sink := make([]byte, len(frame))
			var decodeTime, copyTime time.Duration
			for b.Loop() {
				start := time.Now()
				if _, err := DecodeRequest(frame); err != nil {
					b.Fatal(err)
				}
				decodeTime += time.Since(start)
				start = time.Now()
				copy(sink, frame)
				copyTime += time.Since(start)
			}
			b.ReportMetric(float64(decodeTime)/float64(max(copyTime, 1)), "decode/copy")
		})
	}
}
