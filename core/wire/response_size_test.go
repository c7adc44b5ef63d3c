package wire

import (
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// consumerFetchAnswer is a one-partition fetch answer of recordBytes.
func consumerFetchAnswer(recordBytes int) *kmsg.FetchResponse {
	resp := kmsg.NewPtrFetchResponse()
	resp.Version = 12
	topic := kmsg.NewFetchResponseTopic()
	topic.Topic = "bench-1024"
	partition := kmsg.NewFetchResponseTopicPartition()
	partition.HighWatermark, partition.LastStableOffset, partition.LogStartOffset = 1_000_000, 1_000_000, 0
	partition.PreferredReadReplica = -1
	partition.RecordBatches = make([]byte, recordBytes)
	topic.Partitions = append(topic.Partitions, partition)
	resp.Topics = append(resp.Topics, topic)
	return resp
}

// TestResponseBytesHintCoversFetchAnswers checks that the hint is at least
// the encoded size, so encoding a fetch answer never grows its buffer.
func TestResponseBytesHintCoversFetchAnswers(t *testing.T) {
	header := Header{Key: 1, Version: 12, Correlation: 7}
	for _, recordBytes := range []int{0, 1, 1 << 10, 1 << 20} {
		resp := consumerFetchAnswer(recordBytes)
		hint := responseBytesHint(resp)
		buffer := make([]byte, 0, hint)
		frame := AppendResponse(buffer, header, resp)
		if len(frame) > hint {
			t.Errorf("%d record bytes: encoded %d bytes, hint %d", recordBytes, len(frame), hint)
		}
		if &frame[0] != &buffer[:1][0] {
			t.Errorf("%d record bytes: the encoding grew the buffer", recordBytes)
		}
	}
}

// TestResponseBytesHintCoversWideFetchAnswers checks the hint against a
// follower's answer of every shape: many topics and partitions, tagged
// fields (a diverging epoch, a current leader) and empty record sets.
func TestResponseBytesHintCoversWideFetchAnswers(t *testing.T) {
	for _, version := range []int16{4, 11, 12, 13, 15} {
		resp := kmsg.NewPtrFetchResponse()
		resp.Version = version
		for ti := range 3 {
			topic := kmsg.NewFetchResponseTopic()
			topic.Topic = "a-topic-with-a-long-name-" + string(rune('a'+ti))
			topic.TopicID = [16]byte{byte(ti + 1)}
			for pi := range 5 {
				partition := kmsg.NewFetchResponseTopicPartition()
				partition.Partition = int32(pi)
				partition.ErrorCode = 74
				partition.HighWatermark, partition.LastStableOffset, partition.LogStartOffset = 1<<40, 1<<40, 1<<39
				partition.PreferredReadReplica = -1
				partition.DivergingEpoch.Epoch, partition.DivergingEpoch.EndOffset = 1<<20, 1<<40
				partition.CurrentLeader.LeaderID, partition.CurrentLeader.LeaderEpoch = 3, 1<<20
				partition.RecordBatches = make([]byte, pi*100)
				topic.Partitions = append(topic.Partitions, partition)
			}
			resp.Topics = append(resp.Topics, topic)
		}
		header := Header{Key: 1, Version: version, Correlation: 7}
		hint := responseBytesHint(resp)
		if frame := AppendResponse(nil, header, resp); len(frame) > hint {
			t.Errorf("v%d: encoded %d bytes, hint %d", version, len(frame), hint)
		}
	}
}

// BenchmarkFetchAnswerEncode encodes a 1 MiB fetch answer with
// AppendResponse, which sizes the buffer by the hint, and, interleaved,
// into an empty buffer left to grow (what the broker did before), and
// reports each one's time and their ratio (sized/unsized: below 1 is the
// saving).
func BenchmarkFetchAnswerEncode(b *testing.B) {
	header := Header{Key: 1, Version: 12, Correlation: 7}
	resp := consumerFetchAnswer(1 << 20)
	var sizedTime, unsizedTime time.Duration
	b.SetBytes(1 << 20)
	for b.Loop() {
		start := time.Now()
		AppendResponse(nil, header, resp)
		middle := time.Now()
		appendResponseFrame(nil, header, resp)
		end := time.Now()
		sizedTime, unsizedTime = sizedTime+middle.Sub(start), unsizedTime+end.Sub(middle)
	}
	b.ReportMetric(float64(sizedTime.Nanoseconds())/float64(b.N), "sized-ns/op")
	b.ReportMetric(float64(unsizedTime.Nanoseconds())/float64(b.N), "unsized-ns/op")
	b.ReportMetric(float64(sizedTime)/float64(unsizedTime), "sized/unsized")
}
