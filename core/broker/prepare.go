package broker

import (
	"github.com/twmb/franz-go/pkg/kmsg"

	"sluice/core/wire"
)

// Preparing a request is the part of handling it that needs nothing but
// the frame's bytes: decoding it, and for a produce, checking every
// partition's records (their framing as the request carries them,
// checkProducedFraming; then the batch's CRC32C, magic, compression,
// replica.CheckBatch). In production the network runs it on the
// connection's own goroutine, off the loop and in parallel with it (net's FramePreparer, DESIGN.md §7); in
// the simulator, and for any frame that arrives unprepared, Frame runs the
// same function inline. Either way the loop starts from a decoded request
// whose batches are checked.

// preparedRequest is a request frame made ready for the loop.
type preparedRequest struct {
	// request and err are what wire.RequestDecoder.DecodeInto left and
	// returned: request is never nil, and a frame too short for a header
	// leaves it zero.
	request *wire.Request
	err     error
	// batchChecks holds, for a produce, the check of each partition's
	// records, indexed like the request's topics and partitions.
	batchChecks [][]producedCheck
}

// PrepareFrame prepares a request frame for the client listener's
// connections. It is a pure function of frame, as net requires of a
// preparer: it runs on a connection's goroutine while the loop runs, so it
// reads nothing of the broker.
func (b *Broker) PrepareFrame(frame []byte) any {
	var decoder wire.RequestDecoder // no state shared with the loop
	prepared := prepareRequest(&decoder, &wire.Request{}, frame, nil)
	return &prepared
}

// prepareRequest decodes frame into req (zero) with the connection's
// decoder and checks its batches, into room's arrays when it has room
// (nil: none). It returns the prepared request by value: the loop's own
// Frame uses it at once and need not put it on the heap.
func prepareRequest(decoder *wire.RequestDecoder, req *wire.Request, frame []byte, room *produceRoom) preparedRequest {
	err := decoder.DecodeInto(req, frame)
	prepared := preparedRequest{request: req, err: err}
	if err != nil {
		return prepared
	}
	if produce, ok := req.Body.(*kmsg.ProduceRequest); ok {
		var checkLists [][]producedCheck
		var checksInline []producedCheck
		if room != nil {
			checkLists, checksInline = room.checkLists[:], room.checks[:]
		}
		prepared.batchChecks = roomFor(checkLists, len(produce.Topics))
		for ti := range produce.Topics {
			partitions := produce.Topics[ti].Partitions
			var checks []producedCheck
			if ti == 0 {
				checks = roomFor(checksInline, len(partitions))
			} else {
				checks = make([]producedCheck, len(partitions))
			}
			for pi := range partitions {
				checks[pi] = checkProduced(produce.Version, partitions[pi].Records)
			}
			prepared.batchChecks[ti] = checks
		}
	}
	return prepared
}

// roomFor returns inline[:n] when it has the room, a new array otherwise.
func roomFor[T any](inline []T, n int) []T {
	if n <= len(inline) {
		return inline[:n:n]
	}
	return make([]T, n)
}

// batchCheck is the check of the records of a produce's topic ti,
// partition pi, made when the request was prepared.
func (x *exchange) batchCheck(ti, pi int) producedCheck {
	if ti >= len(x.batchChecks) || pi >= len(x.batchChecks[ti]) {
		panic("broker: a produce partition has no batch check: the request was not prepared")
	}
	return x.batchChecks[ti][pi]
}
