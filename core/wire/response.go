package wire

import (
	"encoding/binary"
	"slices"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// apiVersionsKey is special in the response header: its response header is
// always v0 (no tagged fields), even for flexible versions, so a client that
// does not yet know what the broker speaks can always read the answer.
const apiVersionsKey = 18

// AppendResponse appends a response frame (header then body, no size prefix)
// for a request with the given header. resp's version must equal the
// request's. dst is first grown to hold the whole frame (see
// responseBytesHint).
func AppendResponse(dst []byte, h Header, resp kmsg.Response) []byte {
	return appendResponseFrame(slices.Grow(dst, responseBytesHint(resp)), h, resp)
}

// appendResponseFrame is AppendResponse without growing dst first.
func appendResponseFrame(dst []byte, h Header, resp kmsg.Response) []byte {
	dst = binary.BigEndian.AppendUint32(dst, uint32(h.Correlation))
	if resp.IsFlexible() && h.Key != apiVersionsKey {
		dst = append(dst, 0) // no tagged fields in the response header
	}
	return resp.AppendTo(dst)
}

// AppendRequest appends a request frame (no size prefix): what a node sends
// when it acts as a client of another node, and what the simulator's clients
// send. dst is first grown to hold the whole frame (see requestBytesHint).
func AppendRequest(dst []byte, correlation int32, clientID string, req kmsg.Request) []byte {
	return appendRequestFrame(slices.Grow(dst, requestBytesHint(clientID, req)), correlation, clientID, req)
}

// appendRequestFrame is AppendRequest without growing dst first.
func appendRequestFrame(dst []byte, correlation int32, clientID string, req kmsg.Request) []byte {
	dst = binary.BigEndian.AppendUint16(dst, uint16(req.Key()))
	dst = binary.BigEndian.AppendUint16(dst, uint16(req.GetVersion()))
	dst = binary.BigEndian.AppendUint32(dst, uint32(correlation))
	if req.Key() == 7 && req.GetVersion() == 0 {
		return req.AppendTo(dst) // ControlledShutdown v0: header v0, no client id
	}
	dst = binary.BigEndian.AppendUint16(dst, uint16(len(clientID)))
	dst = append(dst, clientID...)
	if req.IsFlexible() {
		dst = append(dst, 0)
	}
	return req.AppendTo(dst)
}

// DecodeResponse parses a response frame for a request of the given kind and
// version, returning its correlation id and body.
func DecodeResponse(frame []byte, req kmsg.Request) (int32, kmsg.Response, error) {
	if len(frame) < 4 {
		return 0, nil, ErrShortHeader
	}
	resp := req.ResponseKind()
	correlation, err := DecodeResponseInto(frame, req, resp)
	if err != nil {
		return correlation, nil, err
	}
	return correlation, resp, nil
}

// DecodeResponseInto is DecodeResponse into resp, which the caller
// provides: a response of req's kind, new as req.ResponseKind makes it (a
// caller with one request out at a time may keep one and set it back to
// new, for instance to kmsg.NewFetchResponse(), before each).
func DecodeResponseInto(frame []byte, req kmsg.Request, resp kmsg.Response) (int32, error) {
	if len(frame) < 4 {
		return 0, ErrShortHeader
	}
	correlation := int32(binary.BigEndian.Uint32(frame))
	rest := frame[4:]
	resp.SetVersion(req.GetVersion())
	if resp.IsFlexible() && req.Key() != apiVersionsKey {
		after, err := skipTags(rest)
		if err != nil {
			return correlation, err
		}
		rest = after
	}
	return correlation, resp.ReadFrom(rest)
}

// PeekCorrelation reads a response frame's correlation id, which tells the
// caller which request (and so which kmsg type) the rest of the frame is.
func PeekCorrelation(frame []byte) (int32, bool) {
	if len(frame) < 4 {
		return 0, false
	}
	return int32(binary.BigEndian.Uint32(frame)), true
}
