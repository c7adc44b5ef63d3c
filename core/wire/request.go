package wire

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// Header is a request header. ClientID is nil when the client sent a null
// client id (or the header version has none).
type Header struct {
	Key         int16
	Version     int16
	Correlation int32
	ClientID    *string
}

// Request is a decoded request: its header and its kmsg body, whose version
// is already set to Header.Version.
type Request struct {
	Header Header
	Body   kmsg.Request
	// Size is the frame's size in bytes, for limits and metrics.
	Size int
}

// Errors a frame can fail with. A request that fails with ErrUnknownKey or
// ErrVersionTooHigh still has a usable header (its correlation id), so the
// broker can log it and, for ApiVersions, answer it.
var (
	ErrShortHeader    = errors.New("wire: frame shorter than a request header")
	ErrUnknownKey     = errors.New("wire: unknown API key")
	ErrVersionTooHigh = errors.New("wire: API version newer than this build understands")
	ErrMalformed      = errors.New("wire: malformed request")
)

const (
	// headerFixedBytes is key (2) + version (2) + correlation id (4).
	headerFixedBytes = 8
)

// DecodeRequest parses a request frame. On ErrUnknownKey or
// ErrVersionTooHigh the returned Request carries the parsed header and a nil
// Body.
func DecodeRequest(frame []byte) (*Request, error) {
	var d RequestDecoder
	return d.Decode(frame)
}

// RequestDecoder decodes the requests of one connection, in order. A
// client names itself with the same client id in every request, so the
// decoder keeps the last one it decoded and gives the next request that
// carries the same bytes the same *string, instead of two new allocations
// per request (the string and the pointer to it). Requests share the
// string read-only: nothing writes through a Header's ClientID. The zero
// value is ready to use; like the connection it serves, a decoder is used
// by one goroutine at a time.
type RequestDecoder struct {
	clientID *string
	// clientIDs, if set, are the client ids the listener's other
	// connections named, shared with them (NewRequestDecoder).
	clientIDs *ClientIDs
}

// NewRequestDecoder is a decoder that also takes a new connection's
// client id from ids when another connection named it before: clients
// reconnect, and every connection's first request named its client id
// afresh. ids belongs to the goroutine that uses the decoder.
func NewRequestDecoder(ids *ClientIDs) RequestDecoder {
	return RequestDecoder{clientIDs: ids}
}

// ClientIDs is the client ids a listener's connections named, each kept
// once (at most clientIDsMax of them), for their decoders to share. The
// zero value is ready to use.
type ClientIDs struct {
	byName map[string]*string
}

// clientIDsMax bounds the client ids a ClientIDs keeps; past it, a new
// connection's client id is made as if there were none.
const clientIDsMax = 1024

// lookUp returns the kept client id with b's bytes, keeping one if it has
// room.
func (ids *ClientIDs) lookUp(b []byte) *string {
	if id, ok := ids.byName[string(b)]; ok {
		return id
	}
	s := string(b)
	if len(ids.byName) < clientIDsMax {
		if ids.byName == nil {
			ids.byName = map[string]*string{}
		}
		ids.byName[s] = &s
	}
	return &s
}

// Decode is DecodeRequest, sharing the client id with the connection's
// previous request when it is the same.
func (d *RequestDecoder) Decode(frame []byte) (*Request, error) {
	if len(frame) < headerFixedBytes {
		return nil, ErrShortHeader
	}
	r := &Request{}
	return r, d.DecodeInto(r, frame)
}

// DecodeInto is Decode into a Request the caller provides, so that a
// caller keeping per-request state of its own can hold the Request in the
// same allocation. r must be zero but for its Body, which may hold a new
// request (as kmsg.RequestForKey makes it, defaults set) for the frame to
// be decoded into if it is of that kind, so that the caller can provide
// the body's memory too; it is dropped otherwise. On ErrShortHeader r is
// left zero; otherwise it is what Decode would have returned.
func (d *RequestDecoder) DecodeInto(r *Request, frame []byte) error {
	body := r.Body
	r.Body = nil // set again once the body has decoded
	if len(frame) < headerFixedBytes {
		return ErrShortHeader
	}
	r.Size = len(frame)
	r.Header.Key = int16(binary.BigEndian.Uint16(frame[0:]))
	r.Header.Version = int16(binary.BigEndian.Uint16(frame[2:]))
	r.Header.Correlation = int32(binary.BigEndian.Uint32(frame[4:]))
	rest := frame[headerFixedBytes:]

	if body == nil || body.Key() != r.Header.Key {
		body = kmsg.RequestForKey(r.Header.Key)
	}
	if body == nil {
		return fmt.Errorf("%w %d", ErrUnknownKey, r.Header.Key)
	}
	if r.Header.Version < 0 || r.Header.Version > body.MaxVersion() {
		return fmt.Errorf("%w: %s v%d", ErrVersionTooHigh, kmsg.NameForKey(r.Header.Key), r.Header.Version)
	}
	body.SetVersion(r.Header.Version)

	// ControlledShutdown v0 is the one request whose header has no client
	// id (header v0); every other request has header v1 or v2.
	if !(r.Header.Key == 7 && r.Header.Version == 0) {
		clientID, after, err := readNullableString(rest, d.clientID, d.clientIDs)
		if err != nil {
			return err
		}
		if clientID != nil {
			d.clientID = clientID
		}
		r.Header.ClientID, rest = clientID, after
	}
	if body.IsFlexible() {
		after, err := skipTags(rest)
		if err != nil {
			return err
		}
		rest = after
	}
	if err := body.ReadFrom(rest); err != nil {
		return fmt.Errorf("%w: %s v%d: %v", ErrMalformed, kmsg.NameForKey(r.Header.Key), r.Header.Version, err)
	}
	r.Body = body
	return nil
}

// PeekKey reads a request frame's API key, which tells the caller what
// kind of request the rest of the frame is.
func PeekKey(frame []byte) (int16, bool) {
	if len(frame) < 2 {
		return 0, false
	}
	return int16(binary.BigEndian.Uint16(frame)), true
}

// readNullableString reads a nullable string, returning previous when it
// holds the same bytes, or the one ids keeps with them, rather than
// allocating them again.
func readNullableString(b []byte, previous *string, ids *ClientIDs) (*string, []byte, error) {
	if len(b) < 2 {
		return nil, nil, fmt.Errorf("%w: client id length cut off", ErrMalformed)
	}
	length := int16(binary.BigEndian.Uint16(b))
	b = b[2:]
	if length < 0 {
		return nil, b, nil
	}
	if int(length) > len(b) {
		return nil, nil, fmt.Errorf("%w: client id longer than the frame", ErrMalformed)
	}
	if previous != nil && *previous == string(b[:length]) {
		return previous, b[length:], nil
	}
	if ids != nil {
		return ids.lookUp(b[:length]), b[length:], nil
	}
	s := string(b[:length])
	return &s, b[length:], nil
}

// skipTags skips a KIP-482 tagged-field section: a count, then for each
// field a tag and a size, all unsigned varints, then the field's bytes.
func skipTags(b []byte) ([]byte, error) {
	count, n := binary.Uvarint(b)
	if n <= 0 {
		return nil, fmt.Errorf("%w: tag count", ErrMalformed)
	}
	b = b[n:]
	for range count {
		if _, n = binary.Uvarint(b); n <= 0 {
			return nil, fmt.Errorf("%w: tag key", ErrMalformed)
		}
		b = b[n:]
		size, n := binary.Uvarint(b)
		if n <= 0 || size > uint64(len(b)-n) {
			return nil, fmt.Errorf("%w: tag size", ErrMalformed)
		}
		b = b[n+int(size):]
	}
	return b, nil
}
