package harness

import (
	"context"
	"errors"
	"net"
	"sync"
)

// errClientCrashed is what a crashed client's dials get.
var errClientCrashed = errors.New("harness: this client has crashed")

// crashSwitch crashes one in-process client the way SIGKILL crashes a
// consumer's process: at flip, every connection the client holds is
// closed under it (a request half sent, or sent and not yet answered, may
// or may not have arrived), and it never reaches a broker again, so
// nothing it would say on its way out — a LeaveGroup, a last commit — is
// heard. The group coordinator learns of the crash only by the member's
// silence, after session.timeout.ms, as it does in production. The
// harness's clients share one process, so killing the client's process
// is not an option; cutting its sockets is what the brokers would see.
//
// The client dials through dial (kgo.Dialer); the switch tracks what it
// returns.
type crashSwitch struct {
	dialer net.Dialer

	mutex   sync.Mutex
	crashed bool
	open    map[*switchedConn]struct{}
}

func newCrashSwitch() *crashSwitch {
	return &crashSwitch{dialer: net.Dialer{Timeout: clientDialTimeout}, open: map[*switchedConn]struct{}{}}
}

// dial is the client's dialer: a connection while the client lives,
// errClientCrashed after.
func (s *crashSwitch) dial(ctx context.Context, network, address string) (net.Conn, error) {
	if s.isCrashed() {
		return nil, errClientCrashed
	}
	conn, err := s.dialer.DialContext(ctx, network, address)
	if err != nil {
		return nil, err
	}
	s.mutex.Lock()
	defer s.mutex.Unlock()
	if s.crashed {
		// The crash came while this dial was in flight.
		conn.Close()
		return nil, errClientCrashed
	}
	tracked := &switchedConn{Conn: conn, owner: s}
	s.open[tracked] = struct{}{}
	return tracked, nil
}

// flip crashes the client: no dial succeeds after it returns, and every
// connection it had is closed.
func (s *crashSwitch) flip() {
	s.mutex.Lock()
	s.crashed = true
	open := s.open
	s.open = nil
	s.mutex.Unlock()
	for conn := range open {
		conn.Conn.Close()
	}
}

func (s *crashSwitch) isCrashed() bool {
	s.mutex.Lock()
	defer s.mutex.Unlock()
	return s.crashed
}

// openConnections counts the connections the client holds.
func (s *crashSwitch) openConnections() int {
	s.mutex.Lock()
	defer s.mutex.Unlock()
	return len(s.open)
}

// switchedConn is a connection the switch will close at a crash; one the
// client closes first leaves the switch's list.
type switchedConn struct {
	net.Conn
	owner *crashSwitch
}

func (c *switchedConn) Close() error {
	c.owner.mutex.Lock()
	delete(c.owner.open, c)
	c.owner.mutex.Unlock()
	return c.Conn.Close()
}
