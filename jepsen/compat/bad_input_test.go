package compat

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

const (
	badInputTopic = "bad-input"
	controlTopic  = "bad-input-control"
	rawClient     = "raw TCP"
	// closeWaitMax is how long the broker may take to hang up.
	closeWaitMax  = 10 * time.Second
	unknownAPIKey = 32000
)

// TestBadInput sends the real binary what no well-behaved client would:
// frames too large to accept, an API that does not exist, ApiVersions
// newer than it serves, a batch whose CRC is wrong, batches in the old
// magic 1 format. Each is refused the way Kafka refuses it, none of them is stored, other connections are served
// throughout, and the broker is still running at the end.
func TestBadInput(t *testing.T) {
	steps := newClientSteps(t, rawClient)
	broker := StartBroker(t, Options{})
	steps.step("create topics (CreateTopics v7)", true, func(t *testing.T) {
		rawCreateTopics(t, broker.Addr(), 1, badInputTopic, controlTopic)
	})
	// bystander is a healthy connection open throughout: the broker must
	// keep serving it while it hangs up on the others.
	bystander := dialBroker(t, broker.Addr())
	correlation := int32(0)
	checkBystander := func(t *testing.T) {
		t.Helper()
		correlation++
		req := kmsg.NewPtrMetadataRequest()
		req.SetVersion(probeMetadataVersion)
		req.Topics = []kmsg.MetadataRequestTopic{}
		if _, err := RoundTrip(bystander, req, correlation, clientTimeout); err != nil {
			t.Fatalf("the bystander connection was not served: %v", err)
		}
		if err := probeMetadata(broker.Addr(), 1); err != nil {
			t.Fatalf("a new connection was not served: %v", err)
		}
	}

	steps.step("valid batch accepted (control)", true, func(t *testing.T) {
		code := rawProduce(t, broker.Addr(), controlTopic, validBatch())
		if code != 0 {
			t.Fatalf("a valid batch was answered %v; the bad-input checks below would prove nothing", kerr.ErrorForCode(code))
		}
	})
	for _, size := range []uint32{1 << 31, 1<<31 - 1} {
		steps.step("frame size "+describeSize(size)+" closes connection", false, func(t *testing.T) {
			conn := dialBroker(t, broker.Addr())
			var prefix [4]byte
			binary.BigEndian.PutUint32(prefix[:], size)
			if _, err := conn.Write(append(prefix[:], 0, 18, 0, 0)); err != nil {
				t.Fatalf("write: %v", err)
			}
			expectClosed(t, conn, "a size prefix of "+describeSize(size))
			checkBystander(t)
		})
	}
	steps.step("unknown API key closes connection", false, func(t *testing.T) {
		conn := dialBroker(t, broker.Addr())
		var frame []byte
		frame = binary.BigEndian.AppendUint16(frame, unknownAPIKey)
		frame = binary.BigEndian.AppendUint16(frame, 0) // version
		frame = binary.BigEndian.AppendUint32(frame, 7) // correlation id
		frame = binary.BigEndian.AppendUint16(frame, uint16(len(clientID)))
		frame = append(frame, clientID...)
		frame = append(binary.BigEndian.AppendUint32(nil, uint32(len(frame))), frame...)
		if _, err := conn.Write(frame); err != nil {
			t.Fatalf("write: %v", err)
		}
		expectClosed(t, conn, fmt.Sprintf("API key %d", unknownAPIKey))
		checkBystander(t)
	})
	for _, version := range []int16{4, 5, 99} {
		steps.step(fmt.Sprintf("ApiVersions v%d -> v0 UNSUPPORTED_VERSION (KIP-511)", version), false, func(t *testing.T) {
			checkAPIVersionsTooNew(t, broker.Addr(), version)
			checkBystander(t)
		})
	}
	steps.step("bad CRC -> CORRUPT_MESSAGE", false, func(t *testing.T) {
		batch := validBatch()
		batch[len(batch)-1] ^= 0xff // a byte of the last record's value
		if code := rawProduce(t, broker.Addr(), badInputTopic, batch); code != kerr.CorruptMessage.Code {
			t.Errorf("a batch with a wrong CRC was answered %v, want CORRUPT_MESSAGE", kerr.ErrorForCode(code))
		}
		checkBystander(t)
	})
	steps.step("magic 1 message set refused", false, func(t *testing.T) {
		if code := rawProduce(t, broker.Addr(), badInputTopic, legacyMessageSet()); code == 0 {
			t.Errorf("a magic 1 message set was accepted")
		} else {
			t.Logf("magic 1 message set answered %v", kerr.ErrorForCode(code))
		}
		batch := validBatch()
		batch[batchMagicAt] = legacyMagic
		if code := rawProduce(t, broker.Addr(), badInputTopic, batch); code == 0 {
			t.Errorf("a v2-shaped batch claiming magic 1 was accepted")
		} else {
			t.Logf("v2 batch with magic 1 answered %v", kerr.ErrorForCode(code))
		}
		checkBystander(t)
	})
	steps.step("nothing stored from bad input", false, func(t *testing.T) {
		high, records := rawFetch(t, broker.Addr(), badInputTopic)
		if high != 0 || len(records) != 0 {
			t.Errorf("%s partition 0: high watermark %d, %d bytes of records; want an empty log", badInputTopic, high, len(records))
		}
		earliest, latest := rawListOffsets(t, broker.Addr(), badInputTopic)
		if earliest != 0 || latest != 0 {
			t.Errorf("%s partition 0: offsets [%d, %d), want [0, 0)", badInputTopic, earliest, latest)
		}
	})
	steps.step("broker process alive at the end", false, func(t *testing.T) {
		if !broker.Alive() {
			t.Fatalf("the broker process died")
		}
		checkBystander(t)
	})
}

// describeSize names the two oversized size prefixes sent.
func describeSize(size uint32) string {
	if size == 1<<31 {
		return "2 GiB (negative int32)"
	}
	return "2 GiB-1"
}

// expectClosed reads from conn until the broker hangs up (EOF or reset);
// any answer, or silence past closeWaitMax, fails the test.
func expectClosed(t *testing.T, conn net.Conn, sent string) {
	t.Helper()
	if err := conn.SetReadDeadline(time.Now().Add(closeWaitMax)); err != nil {
		t.Fatal(err)
	}
	var buffer [512]byte
	n, err := conn.Read(buffer[:])
	var timeout net.Error
	switch {
	case n > 0:
		t.Errorf("after %s the broker answered %d bytes instead of closing the connection", sent, n)
	case errors.Is(err, io.EOF) || errors.Is(err, syscall.ECONNRESET):
		// closed, as it should be
	case errors.As(err, &timeout) && timeout.Timeout():
		t.Errorf("after %s the connection was still open %v later", sent, closeWaitMax)
	default:
		t.Errorf("after %s, reading: %v", sent, err)
	}
}

// checkAPIVersionsTooNew sends ApiVersions at a version above what the
// broker serves, as a newer client does first (franz-go 1.22 sends v5,
// sarama 1.61 v4). KIP-511: the broker answers in v0 form, which every
// client can read, with UNSUPPORTED_VERSION and the versions it serves,
// so the client retries at one of them. Closing the connection instead
// leaves such a client unable to connect at all.
func checkAPIVersionsTooNew(t *testing.T, address string, version int16) {
	t.Helper()
	conn := dialBroker(t, address)
	req := kmsg.NewPtrApiVersionsRequest()
	req.SetVersion(version)
	req.ClientSoftwareName = clientID
	req.ClientSoftwareVersion = "1"
	const correlation = 11
	if err := conn.SetDeadline(time.Now().Add(clientTimeout)); err != nil {
		t.Fatal(err)
	}
	frame := kmsg.NewRequestFormatter(kmsg.FormatterClientID(clientID)).AppendRequest(nil, req, correlation)
	if _, err := conn.Write(frame); err != nil {
		t.Fatalf("write: %v", err)
	}
	body, err := ReadFrame(conn, responseBytesMax)
	if err != nil {
		t.Fatalf("ApiVersions v%d got no answer (the broker should answer in v0 form, not hang up): %v", version, err)
	}
	if len(body) < 4 || int32(binary.BigEndian.Uint32(body)) != correlation {
		t.Fatalf("answer does not carry correlation id %d: % x", correlation, tail(body, 16))
	}
	resp := kmsg.NewPtrApiVersionsResponse()
	resp.SetVersion(0)
	if err := resp.ReadFrom(body[4:]); err != nil {
		t.Fatalf("answer does not decode as ApiVersions v0: %v (% x)", err, tail(body, 64))
	}
	if resp.ErrorCode != kerr.UnsupportedVersion.Code {
		t.Errorf("answer error %v, want UNSUPPORTED_VERSION", kerr.ErrorForCode(resp.ErrorCode))
	}
	served := slices.IndexFunc(resp.ApiKeys, func(k kmsg.ApiVersionsResponseApiKey) bool { return k.ApiKey == apiVersionsKey })
	if served < 0 || resp.ApiKeys[served].MaxVersion >= version || resp.ApiKeys[served].MaxVersion < 0 {
		t.Errorf("answer does not name an ApiVersions version below v%d to retry with: %+v", version, resp.ApiKeys)
	}
}
