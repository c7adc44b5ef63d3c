//go:build !linux

package harness

import (
	"errors"
	"net"
)

// connectingProcess cannot tell who opened a connection without Linux's
// /proc: every connection counts as a client's, so node-to-node links
// cannot be cut (the nemesis refuses partitions).
func connectingProcess(conn net.Conn, candidates []int) (int, error) {
	return 0, errors.New("harness: telling nodes apart needs Linux's /proc")
}

const partitionsSupported = false
