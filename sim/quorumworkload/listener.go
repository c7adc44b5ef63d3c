package quorumworkload

import (
	"github.com/twmb/franz-go/pkg/kmsg"

	"sluice/core"
	"sluice/core/quorum"
	"sluice/core/wire"
)

// listener is a node's controller listener: every request that arrives is
// handed to the node's Quorum, and the answers leave in request order, as
// Kafka answers on one connection. (In the production node the controller
// listener does the same, through quorum.HandleRequest.)
type listener struct {
	quorum *quorum.Quorum
	// answered, if set, sees every request with its answer as the
	// answer leaves (the nemesis's crash after a vote).
	answered func(kmsg.Request, kmsg.Response)
}

// answersPendingMax bounds the requests one connection may have waiting
// for their answers; beyond it the connection stops reading, as Kafka mutes
// a channel.
const answersPendingMax = 64

func (l *listener) Accept(c core.Conn) core.Handler {
	return &serverConn{conn: c, quorum: l.quorum, answered: l.answered}
}

type serverConn struct {
	conn     core.Conn
	quorum   *quorum.Quorum
	answered func(kmsg.Request, kmsg.Response)
	answers  []*answer
	paused   bool
	closed   bool
}

// answer is one request's answer, ready or not yet.
type answer struct {
	frame []byte
	ready bool
}

func (s *serverConn) Frame(frame []byte) {
	if s.closed {
		return
	}
	req, err := wire.DecodeRequest(frame)
	if err != nil {
		s.close()
		return
	}
	a := &answer{}
	s.answers = append(s.answers, a)
	if len(s.answers) >= answersPendingMax && !s.paused {
		s.paused = true
		s.conn.PauseReceiving()
	}
	handled := s.quorum.HandleRequest(req.Body, func(resp kmsg.Response) {
		a.frame, a.ready = wire.AppendResponse(nil, req.Header, resp), true
		s.flush()
		if s.answered != nil {
			s.answered(req.Body, resp)
		}
	})
	if !handled {
		s.close()
	}
}

// flush sends the answers that are ready and have no unready one before
// them.
func (s *serverConn) flush() {
	for len(s.answers) > 0 && s.answers[0].ready && !s.closed {
		s.conn.Send(s.answers[0].frame)
		s.answers = s.answers[1:]
	}
	if s.paused && len(s.answers) < answersPendingMax {
		s.paused = false
		s.conn.ResumeReceiving()
	}
}

func (s *serverConn) close() {
	s.closed = true
	s.conn.Close()
}

func (s *serverConn) Closed(error) { s.closed = true }
