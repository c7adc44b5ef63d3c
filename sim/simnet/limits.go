package simnet

import "time"

// The network's bounds, in one place.
const (
	// directionQueueBytesMax bounds the undelivered data bytes one direction
	// of one connection may hold, the simulated socket send buffer. A Send
	// that would pass it breaks the connection instead (core.Conn's promise).
	directionQueueBytesMax = 64 << 20

	// directionQueueFramesMax bounds the undelivered frames one direction
	// may hold, so that empty frames cannot grow a queue without limit.
	directionQueueFramesMax = 1 << 20

	// connectionsMax bounds the live connections on one network; a dial
	// beyond it fails with ErrTooManyConnections.
	connectionsMax = 1 << 16

	// connectTimeoutDefault is used when Faults.ConnectTimeout is zero.
	// Linux gives up on an unanswered SYN after about two minutes; a
	// simulation wants a failure it can see sooner.
	connectTimeoutDefault = 10 * time.Second

	// ephemeralPortFirst and ephemeralPortLast are the range a dialing host
	// takes its local ports from, as Linux's ip_local_port_range does. They
	// only name connections in RemoteAddr and traces.
	ephemeralPortFirst = 32768
	ephemeralPortLast  = 60999

	// nanosecondsPerSecond converts a bandwidth in bytes per second to the
	// nanoseconds one byte occupies a link.
	nanosecondsPerSecond = int64(time.Second)
)
