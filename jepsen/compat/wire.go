package compat

import (
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"time"

	"github.com/twmb/franz-go/pkg/kbin"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// responseBytesMax bounds a response frame RoundTrip accepts: above any
// answer these tests provoke (a fetch answer is capped by its MaxBytes),
// and small enough that a corrupt size prefix cannot exhaust memory.
const responseBytesMax = 64 << 20

// apiVersionsKey is ApiVersions' key: its response header stays v0 even
// when the body is flexible (KIP-511), so that any client can read it.
const apiVersionsKey = 18

// clientID names this harness in the broker's logs.
const clientID = "sluice-compat"

// RoundTrip sends one request on conn and reads its answer, all within
// timeout. The request's version must be set; the answer is decoded at the
// same version. It is the harness's own minimal client, for probes and for
// tests that must control every byte a real client would hide.
func RoundTrip(conn net.Conn, req kmsg.Request, correlationID int32, timeout time.Duration) (kmsg.Response, error) {
	if err := conn.SetDeadline(time.Now().Add(timeout)); err != nil {
		return nil, err
	}
	defer conn.SetDeadline(time.Time{})
	frame := kmsg.NewRequestFormatter(kmsg.FormatterClientID(clientID)).AppendRequest(nil, req, correlationID)
	if _, err := conn.Write(frame); err != nil {
		return nil, fmt.Errorf("writing %s: %w", kmsg.NameForKey(req.Key()), err)
	}
	body, err := ReadFrame(conn, responseBytesMax)
	if err != nil {
		return nil, fmt.Errorf("reading %s answer: %w", kmsg.NameForKey(req.Key()), err)
	}
	return decodeResponse(req, correlationID, body)
}

// ReadFrame reads one size-prefixed Kafka frame and returns what follows
// the size. A size above frameBytesLimit or below zero is an error.
func ReadFrame(r io.Reader, frameBytesLimit int) ([]byte, error) {
	var prefix [4]byte
	if _, err := io.ReadFull(r, prefix[:]); err != nil {
		return nil, err
	}
	size := int32(binary.BigEndian.Uint32(prefix[:]))
	if size < 0 || int(size) > frameBytesLimit {
		return nil, fmt.Errorf("frame size %d outside [0, %d]", size, frameBytesLimit)
	}
	body := make([]byte, size)
	if _, err := io.ReadFull(r, body); err != nil {
		return nil, err
	}
	return body, nil
}

// decodeResponse checks the response header and decodes the body at the
// request's version.
func decodeResponse(req kmsg.Request, correlationID int32, body []byte) (kmsg.Response, error) {
	reader := kbin.Reader{Src: body}
	if got := reader.Int32(); got != correlationID {
		return nil, fmt.Errorf("answer has correlation id %d, want %d", got, correlationID)
	}
	if req.IsFlexible() && req.Key() != apiVersionsKey {
		// The flexible response header ends with tagged fields, which
		// no version defines yet: skip whatever is there.
		for range reader.Uvarint() {
			reader.Uvarint()
			reader.Span(int(reader.Uvarint()))
		}
	}
	if !reader.Ok() {
		return nil, fmt.Errorf("answer header truncated (%d bytes)", len(body))
	}
	resp := req.ResponseKind()
	resp.SetVersion(req.GetVersion())
	if err := resp.ReadFrom(reader.Src); err != nil {
		return nil, fmt.Errorf("decoding %s v%d answer: %w", kmsg.NameForKey(req.Key()), req.GetVersion(), err)
	}
	return resp, nil
}
