package simclient

import (
	"errors"

	"sluice/sim/simnet"
)

// Errors a request's callback can receive instead of an answer. They split
// in two: the request certainly never reached the broker (ErrNotDelivered,
// ErrTooManyPending, ErrUnsupportedVersion, ErrUnknownBroker), or it may
// have and its effect is unknown (ErrConnectionLost, ErrRequestTimeout).
var (
	// ErrNotDelivered: the request was never written to a working
	// connection (the dial was refused or timed out, or the connection
	// closed before the request's turn to be written).
	ErrNotDelivered = errors.New("simclient: request not delivered")
	// ErrTooManyPending: the connection already held pendingRequestsMax
	// requests; this one was refused without being sent.
	ErrTooManyPending = errors.New("simclient: too many requests pending on the connection")
	// ErrUnsupportedVersion: the broker does not serve the pinned version
	// of this API (see versions.go); the request was not sent.
	ErrUnsupportedVersion = errors.New("simclient: broker does not serve the pinned API version")
	// ErrUnknownBroker: the metadata names no address for the node.
	ErrUnknownBroker = errors.New("simclient: no address known for the broker")

	// ErrConnectionLost: the connection broke after the request was
	// written and before its answer arrived. It may have taken effect.
	ErrConnectionLost = errors.New("simclient: connection lost with the request in flight")
	// ErrRequestTimeout: no answer within the request timeout; the
	// connection was closed. The request may have taken effect.
	ErrRequestTimeout = errors.New("simclient: request timed out")
	// ErrProtocol: an answer arrived that does not match the oldest
	// request, or did not decode; the connection was closed.
	ErrProtocol = errors.New("simclient: protocol error")
)

// IsUnknownOutcome reports whether err leaves a request's effect unknown:
// it was written to the broker and no answer came back.
func IsUnknownOutcome(err error) bool {
	if errors.Is(err, ErrNotDelivered) {
		return false // whatever broke the connection, this never left
	}
	return errors.Is(err, ErrConnectionLost) || errors.Is(err, ErrRequestTimeout) || errors.Is(err, ErrProtocol)
}

// neverConnected reports whether a connection's close reason means no
// byte ever reached the other side: the handshake never completed.
func neverConnected(cause error) bool {
	return errors.Is(cause, simnet.ErrConnectionRefused) || errors.Is(cause, simnet.ErrConnectTimeout) ||
		errors.Is(cause, simnet.ErrBadAddress) || errors.Is(cause, simnet.ErrTooManyConnections)
}
