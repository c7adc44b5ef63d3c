package harness

import (
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kbin"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// apiVersionsKey is ApiVersions' key: its response header stays v0 even
// when the body is flexible (KIP-511).
const apiVersionsKey = 18

// correlationIDs numbers the observer's requests.
var correlationIDs atomic.Int32

// askNode sends one request straight to a node's real listener, around
// its proxy, and reads the answer: the harness's view of a node must not
// depend on the faults it injects. The request's version must be set.
func askNode(address string, req kmsg.Request, timeout time.Duration) (kmsg.Response, error) {
	conn, err := net.DialTimeout("tcp", address, timeout)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	if err := conn.SetDeadline(time.Now().Add(timeout)); err != nil {
		return nil, err
	}
	correlationID := correlationIDs.Add(1)
	frame := kmsg.NewRequestFormatter(kmsg.FormatterClientID(observerClientID)).AppendRequest(nil, req, correlationID)
	if _, err := conn.Write(frame); err != nil {
		return nil, fmt.Errorf("writing %s: %w", kmsg.NameForKey(req.Key()), err)
	}
	var prefix [4]byte
	if _, err := io.ReadFull(conn, prefix[:]); err != nil {
		return nil, fmt.Errorf("reading %s answer: %w", kmsg.NameForKey(req.Key()), err)
	}
	size := int32(binary.BigEndian.Uint32(prefix[:]))
	if size < 0 || size > observerResponseBytesMax {
		return nil, fmt.Errorf("%s answer of %d bytes, outside [0, %d]", kmsg.NameForKey(req.Key()), size, observerResponseBytesMax)
	}
	body := make([]byte, size)
	if _, err := io.ReadFull(conn, body); err != nil {
		return nil, fmt.Errorf("reading %s answer: %w", kmsg.NameForKey(req.Key()), err)
	}
	reader := kbin.Reader{Src: body}
	if got := reader.Int32(); got != correlationID {
		return nil, fmt.Errorf("answer has correlation id %d, want %d", got, correlationID)
	}
	if req.IsFlexible() && req.Key() != apiVersionsKey {
		for range reader.Uvarint() { // tagged fields of the header: none defined
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
