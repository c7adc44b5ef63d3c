package wire

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// FuzzDecodeRequest feeds arbitrary frames to the decoder: it may reject
// them, never panic, and whatever it accepts must encode again.
func FuzzDecodeRequest(f *testing.F) {
	for _, req := range []kmsg.Request{
		&kmsg.ApiVersionsRequest{Version: 3, ClientSoftwareName: "x", ClientSoftwareVersion: "1"},
		&kmsg.MetadataRequest{Version: 12},
		&kmsg.ProduceRequest{Version: 9, Acks: -1, TimeoutMillis: 1000, Topics: []kmsg.ProduceRequestTopic{{Topic: "t", Partitions: []kmsg.ProduceRequestTopicPartition{{Partition: 0, Records: []byte{1, 2, 3}}}}}},
		&kmsg.FetchRequest{Version: 12, MaxWaitMillis: 500, Topics: []kmsg.FetchRequestTopic{{Topic: "t", Partitions: []kmsg.FetchRequestTopicPartition{{Partition: 0, FetchOffset: 5, PartitionMaxBytes: 1 << 20}}}}},
		&kmsg.ListOffsetsRequest{Version: 7},
		&kmsg.ListOffsetsRequest{Version: 10},
		&kmsg.CreateTopicsRequest{Version: 5},
	} {
		f.Add(AppendRequest(nil, 1, "seed", req))
	}
	f.Add([]byte{})
	f.Add([]byte{0, 18, 0, 3, 0, 0, 0, 1, 0xff, 0xff})
	f.Fuzz(func(t *testing.T, frame []byte) {
		r, err := DecodeRequest(frame)
		if err != nil {
			return
		}
		if r.Body == nil || r.Body.Key() != r.Header.Key || r.Body.GetVersion() != r.Header.Version {
			t.Fatalf("accepted frame decoded inconsistently: %+v", r.Header)
		}
		_ = r.Body.AppendTo(nil)
	})
}
