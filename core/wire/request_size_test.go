package wire

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestRequestBytesHintHoldsFetchesAndProduces: a fetch (at the newest
// version, with a high watermark tag on every partition) and a produce
// are encoded without growing the buffer AppendRequest sizes, so the hint
// bounds their frames.
func TestRequestBytesHintHoldsFetchesAndProduces(t *testing.T) {
	fetch := kmsg.NewPtrFetchRequest()
	fetch.Version = fetch.MaxVersion()
	clusterID, transactionalID := "cluster", "transactional-id"
	fetch.ClusterID, fetch.Rack = &clusterID, "rack-1"
	for topic := range 3 {
		ft := kmsg.NewFetchRequestTopic()
		ft.Topic = fmt.Sprintf("topic-%d", topic)
		for p := range int32(50) {
			fp := kmsg.NewFetchRequestTopicPartition()
			fp.Partition, fp.CurrentLeaderEpoch, fp.FetchOffset, fp.LastFetchedEpoch = p, 1<<30, 1<<60, 1<<30
			fp.LogStartOffset, fp.PartitionMaxBytes, fp.HighWatermark = 1<<60, 1<<30, 1<<60
			ft.Partitions = append(ft.Partitions, fp)
		}
		fetch.Topics = append(fetch.Topics, ft)
		forgotten := kmsg.NewFetchRequestForgottenTopic()
		forgotten.Topic, forgotten.Partitions = ft.Topic, []int32{1, 2, 3}
		fetch.ForgottenTopics = append(fetch.ForgottenTopics, forgotten)
	}

	produce := kmsg.NewPtrProduceRequest()
	produce.Version = 9
	produce.TransactionID = &transactionalID
	for topic := range 3 {
		pt := kmsg.NewProduceRequestTopic()
		pt.Topic = fmt.Sprintf("topic-%d", topic)
		for p := range int32(20) {
			pp := kmsg.NewProduceRequestTopicPartition()
			pp.Partition, pp.Records = p, bytes.Repeat([]byte{7}, 1000+int(p))
			pt.Partitions = append(pt.Partitions, pp)
		}
		produce.Topics = append(produce.Topics, pt)
	}

	for _, req := range []kmsg.Request{fetch, produce} {
		hint := requestBytesHint("client-1", req)
		frame := AppendRequest(nil, 1, "client-1", req)
		if len(frame) > hint {
			t.Errorf("%s: frame of %d bytes, more than the hint of %d", kmsg.NameForKey(req.Key()), len(frame), hint)
		}
	}
}
