package wire

import (
	"bytes"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// Encoder makes frames of their exact size, for a sender that encodes
// many: it encodes each into a buffer it keeps and hands out a copy of
// just the frame's bytes. A frame must be fresh (the network keeps what it
// is given), and small ones are most of them: a produce's answer is some
// 50 bytes, a heartbeat's 15, where the hints AppendResponse and
// AppendRequest size their buffers by allot 256 and 64 plus the client id,
// each allocated and cleared at that size, and a fetch's hint allots some
// 60 bytes a partition more than it takes. A frame whose hint is large (a
// fetch answer or a produce carrying many records) is encoded straight
// into its own buffer instead: copying its records once more would cost
// more than the hint's slack.
//
// The zero value is ready to use. Like a connection, an Encoder is used by
// one goroutine at a time.
type Encoder struct {
	buffer []byte
}

// encoderBufferBytesMax bounds the buffer an Encoder keeps between
// frames: one big answer (a metadata listing of many topics) grows it,
// and it is let go afterwards rather than held at that size. A frame
// whose hint is larger is encoded into a buffer of its own.
const encoderBufferBytesMax = 64 << 10

// encoderCopyBytesMax is the largest hint of a frame the Encoder encodes
// into its buffer and copies out.
const encoderCopyBytesMax = 4 << 10

// Response is AppendResponse into a new frame of its own.
func (e *Encoder) Response(h Header, resp kmsg.Response) []byte {
	hint := responseBytesHint(resp)
	if hint > encoderCopyBytesMax {
		return appendResponseFrame(make([]byte, 0, hint), h, resp)
	}
	e.buffer = appendResponseFrame(e.buffer[:0], h, resp)
	return e.frame()
}

// Request is AppendRequest into a new frame of its own.
func (e *Encoder) Request(correlation int32, clientID string, req kmsg.Request) []byte {
	hint := requestBytesHint(clientID, req)
	if hint > encoderCopyBytesMax {
		return appendRequestFrame(make([]byte, 0, hint), correlation, clientID, req)
	}
	e.buffer = appendRequestFrame(e.buffer[:0], correlation, clientID, req)
	return e.frame()
}

// frame copies the frame just encoded out of the buffer.
func (e *Encoder) frame() []byte {
	frame := bytes.Clone(e.buffer)
	if cap(e.buffer) > encoderBufferBytesMax {
		e.buffer = nil
	}
	return frame
}

// Responder takes a request's answer. A handler that answers later, or in
// another package (the quorum, the controller, the group coordinator),
// answers through one: the broker hands it the request's exchange itself,
// where a callback would be a closure over it, an allocation per request.
type Responder interface {
	Respond(kmsg.Response)
}

// ResponderFunc is a function as a Responder.
type ResponderFunc func(kmsg.Response)

// Respond calls f.
func (f ResponderFunc) Respond(resp kmsg.Response) { f(resp) }
