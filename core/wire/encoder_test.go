package wire

import (
	"bytes"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestEncoderFramesAreExactAndFresh: an Encoder's frames hold the bytes
// AppendResponse and AppendRequest make, in a slice of their own that the
// next frame does not touch.
func TestEncoderFramesAreExactAndFresh(t *testing.T) {
	var e Encoder
	heartbeat := &kmsg.BrokerHeartbeatResponse{Version: 1}
	metadata := kmsg.NewPtrMetadataResponse()
	metadata.Version = 12
	for i := range 100 {
		topic := kmsg.NewMetadataResponseTopic()
		topic.Topic = kmsg.StringPtr("a-topic-with-a-name-of-some-length-" + string(rune('a'+i%26)))
		metadata.Topics = append(metadata.Topics, topic)
	}
	header := Header{Key: 63, Version: 1, Correlation: 9}
	first := e.Response(header, heartbeat)
	if want := AppendResponse(nil, header, heartbeat); !bytes.Equal(first, want) {
		t.Fatalf("heartbeat answer %x, want %x", first, want)
	}
	if cap(first) > 16 {
		t.Errorf("a %d-byte answer in a frame of capacity %d", len(first), cap(first))
	}
	kept := bytes.Clone(first)
	metadataHeader := Header{Key: 3, Version: 12, Correlation: 10}
	if got, want := e.Response(metadataHeader, metadata), AppendResponse(nil, metadataHeader, metadata); !bytes.Equal(got, want) {
		t.Fatalf("metadata answer differs")
	}
	request := &kmsg.BrokerHeartbeatRequest{Version: 1, BrokerID: 2, BrokerEpoch: 7}
	if got, want := e.Request(11, "broker-2", request), AppendRequest(nil, 11, "broker-2", request); !bytes.Equal(got, want) {
		t.Fatalf("heartbeat request %x, want %x", got, want)
	}
	if !bytes.Equal(first, kept) {
		t.Fatalf("a later frame changed an earlier one")
	}
	fetch := kmsg.NewPtrFetchRequest()
	fetch.Version = 12
	if got, want := e.Request(12, "c", fetch), AppendRequest(nil, 12, "c", fetch); !bytes.Equal(got, want) {
		t.Fatalf("fetch request differs")
	}
}
