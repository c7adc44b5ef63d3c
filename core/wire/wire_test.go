package wire

import (
	"errors"
	"reflect"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestEveryRequestRoundTrips encodes every request kmsg knows, at every
// version, as a client would, and checks DecodeRequest reads back the same
// header and body.
func TestEveryRequestRoundTrips(t *testing.T) {
	for key := int16(0); key < 100; key++ {
		req := kmsg.RequestForKey(key)
		if req == nil {
			continue
		}
		for version := int16(0); version <= req.MaxVersion(); version++ {
			req := kmsg.RequestForKey(key)
			req.SetVersion(version)
			frame := AppendRequest(nil, 12345, "client-1", req)
			got, err := DecodeRequest(frame)
			if err != nil {
				t.Fatalf("%s v%d: %v", kmsg.NameForKey(key), version, err)
			}
			headerV0 := key == 7 && version == 0
			if got.Header.Key != key || got.Header.Version != version || got.Header.Correlation != 12345 ||
				headerV0 != (got.Header.ClientID == nil) || (!headerV0 && *got.Header.ClientID != "client-1") {
				t.Fatalf("%s v%d: header %+v", kmsg.NameForKey(key), version, got.Header)
			}
			if diff := cmp.Diff(req.AppendTo(nil), got.Body.AppendTo(nil)); diff != "" {
				t.Fatalf("%s v%d: body differs: %s", kmsg.NameForKey(key), version, diff)
			}
		}
	}
}

// TestDecodeIntoProvidedBody checks that a body the caller provides is
// decoded into when the frame is of its kind, to the same request a new
// one would hold, and dropped when it is not.
func TestDecodeIntoProvidedBody(t *testing.T) {
	sent := kmsg.NewPtrFetchRequest()
	sent.Version = 12
	sent.MaxWaitMillis = 500
	topic := kmsg.NewFetchRequestTopic()
	topic.Topic = "orders"
	partition := kmsg.NewFetchRequestTopicPartition()
	partition.Partition, partition.FetchOffset = 3, 42
	topic.Partitions = append(topic.Partitions, partition)
	sent.Topics = append(sent.Topics, topic)
	frame := AppendRequest(nil, 5, "c", sent)
	want, err := DecodeRequest(frame)
	if err != nil {
		t.Fatal(err)
	}

	var d RequestDecoder
	provided := kmsg.NewFetchRequest()
	got := Request{Body: &provided}
	if err := d.DecodeInto(&got, frame); err != nil {
		t.Fatal(err)
	}
	if got.Body != kmsg.Request(&provided) {
		t.Fatalf("the provided body was not decoded into")
	}
	if !reflect.DeepEqual(want, &got) {
		t.Fatalf("decoded into the provided body: %+v, want %+v", got, want)
	}

	other := kmsg.NewMetadataRequest()
	got = Request{Body: &other}
	if err := d.DecodeInto(&got, frame); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(want, &got) {
		t.Fatalf("with a body of another kind provided: %+v, want %+v", got, want)
	}

	got = Request{Body: &other}
	if err := d.DecodeInto(&got, frame[:3]); !errors.Is(err, ErrShortHeader) || got.Body != nil {
		t.Fatalf("short frame: %v, body %v", err, got.Body)
	}
}

func TestDecodeRequestErrors(t *testing.T) {
	if _, err := DecodeRequest([]byte{0, 1, 2}); !errors.Is(err, ErrShortHeader) {
		t.Fatalf("short: %v", err)
	}
	unknown := []byte{0x7f, 0x00, 0, 0, 0, 0, 0, 9, 0, 0}
	r, err := DecodeRequest(unknown)
	if !errors.Is(err, ErrUnknownKey) || r.Header.Correlation != 9 {
		t.Fatalf("unknown key: %v %+v", err, r)
	}
	tooNew := AppendRequest(nil, 77, "c", &kmsg.ApiVersionsRequest{Version: 3})
	tooNew[3] = 99 // version 99
	r, err = DecodeRequest(tooNew)
	if !errors.Is(err, ErrVersionTooHigh) || r.Header.Key != 18 || r.Header.Version != 99 || r.Header.Correlation != 77 {
		t.Fatalf("too new: %v %+v", err, r)
	}
	cut := AppendRequest(nil, 1, "c", &kmsg.MetadataRequest{Version: 12, Topics: []kmsg.MetadataRequestTopic{{Topic: kmsg.StringPtr("t")}}})
	if _, err := DecodeRequest(cut[:len(cut)-3]); !errors.Is(err, ErrMalformed) {
		t.Fatalf("cut body: %v", err)
	}
}

func TestResponseHeaderVersions(t *testing.T) {
	// ApiVersions v3 is flexible, yet its response header is v0.
	resp := &kmsg.ApiVersionsResponse{Version: 3}
	frame := AppendResponse(nil, Header{Key: 18, Version: 3, Correlation: 5}, resp)
	correlation, decoded, err := DecodeResponse(frame, &kmsg.ApiVersionsRequest{Version: 3})
	if err != nil || correlation != 5 || decoded.(*kmsg.ApiVersionsResponse).ErrorCode != 0 {
		t.Fatalf("api versions: %v %d", err, correlation)
	}
	// Metadata v12 is flexible: a tag byte follows the correlation id.
	meta := &kmsg.MetadataResponse{Version: 12}
	frame = AppendResponse(nil, Header{Key: 3, Version: 12, Correlation: 6}, meta)
	if frame[4] != 0 {
		t.Fatalf("metadata v12 response header has no tag section")
	}
	if _, _, err := DecodeResponse(frame, &kmsg.MetadataRequest{Version: 12}); err != nil {
		t.Fatalf("metadata v12: %v", err)
	}
}

// TestRequestDecoderSharesARepeatedClientID: a connection's decoder gives
// requests naming the same client id one shared string, a different id
// its own, and a null id (a v0 header) nil, without forgetting the last.
func TestRequestDecoderSharesARepeatedClientID(t *testing.T) {
	var d RequestDecoder
	decode := func(clientID string, req kmsg.Request) *Request {
		t.Helper()
		r, err := d.Decode(AppendRequest(nil, 1, clientID, req))
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	heartbeat := func() kmsg.Request { return &kmsg.HeartbeatRequest{Version: 4} }
	first := decode("client-1", heartbeat())
	second := decode("client-1", heartbeat())
	if *first.Header.ClientID != "client-1" || first.Header.ClientID != second.Header.ClientID {
		t.Fatalf("same id: %q at %p and %q at %p, want one shared string", *first.Header.ClientID, first.Header.ClientID, *second.Header.ClientID, second.Header.ClientID)
	}
	if v0 := decode("", &kmsg.ControlledShutdownRequest{Version: 0}); v0.Header.ClientID != nil {
		t.Fatalf("v0 header: client id %q, want nil", *v0.Header.ClientID)
	}
	third := decode("client-1", heartbeat())
	other := decode("client-2", heartbeat())
	if third.Header.ClientID != first.Header.ClientID || *other.Header.ClientID != "client-2" || *first.Header.ClientID != "client-1" {
		t.Fatalf("after a null and another id: %q, %q, %q", *first.Header.ClientID, *third.Header.ClientID, *other.Header.ClientID)
	}
}

// TestClientIDsSharedAcrossConnections: decoders sharing a ClientIDs give
// a client id a connection named before the same string, on a new
// connection too.
func TestClientIDsSharedAcrossConnections(t *testing.T) {
	var ids ClientIDs
	decode := func(d *RequestDecoder, clientID string) *string {
		t.Helper()
		r, err := d.Decode(AppendRequest(nil, 1, clientID, &kmsg.HeartbeatRequest{Version: 4}))
		if err != nil {
			t.Fatal(err)
		}
		return r.Header.ClientID
	}
	first, second := NewRequestDecoder(&ids), NewRequestDecoder(&ids)
	a := decode(&first, "producer-1")
	if b := decode(&second, "producer-1"); b != a || *b != "producer-1" {
		t.Fatalf("second connection's id %q at %p, want the first's at %p", *b, b, a)
	}
	if c := decode(&second, "consumer-1"); *c != "consumer-1" || c == a {
		t.Fatalf("another id: %q", *c)
	}
	// A new connection naming a known id allocates what a connection's
	// next request does: nothing for its client id.
	same := testing.AllocsPerRun(100, func() { decode(&first, "producer-1") })
	if fresh := testing.AllocsPerRun(100, func() {
		d := NewRequestDecoder(&ids)
		decode(&d, "producer-1")
	}); fresh != same {
		t.Errorf("a new connection naming a known id: %v allocations, a known connection's request %v", fresh, same)
	}
}
