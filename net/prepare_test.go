package net

import (
	"fmt"
	"testing"

	"sluice/core"
)

// preparingAcceptor is an acceptor that is also a FramePreparer: it
// prepares each frame into a description of it, and its handlers record
// what PreparedFrame received as "frame|prepared".
type preparingAcceptor struct {
	*acceptor
}

func (preparingAcceptor) PrepareFrame(frame []byte) any {
	return fmt.Sprintf("prepared %d bytes", len(frame))
}

func (a preparingAcceptor) Accept(c core.Conn) core.Handler {
	return preparedRecorder{recorder: a.acceptor.Accept(c).(*recorder)}
}

// preparedRecorder records frames delivered prepared with their
// preparation, and any delivered unprepared as they are.
type preparedRecorder struct{ *recorder }

func (r preparedRecorder) PreparedFrame(frame []byte, prepared any) {
	r.recorder.Frame([]byte(string(frame) + "|" + prepared.(string)))
}

// TestPreparedFramesArriveInOrderWithTheirPreparation: with a preparer,
// every frame reaches PreparedFrame with what PrepareFrame made of that
// same frame, in order, including frames held by a pause.
func TestPreparedFramesArriveInOrderWithTheirPreparation(t *testing.T) {
	server, client := startNode(t), startNode(t)
	a := preparingAcceptor{acceptor: newAcceptor(nil)}
	l := listen(t, server, a, DefaultLimits())
	d := newTestDialer(t, client, DefaultLimits())
	conn, _ := dial(t, client, d, l.Addr())

	var want [][]byte
	send := func(from, to int) {
		client.do(t, func() {
			for i := from; i < to; i++ {
				frame := fmt.Sprintf("frame %d", i)
				want = append(want, []byte(fmt.Sprintf("%s|prepared %d bytes", frame, len(frame))))
				conn.Send([]byte(frame))
			}
		})
	}
	s := a.next(t)
	send(0, 50)
	s.recorder.waitForFrames(t, 50)
	server.do(t, func() { s.conn.PauseReceiving() })
	send(50, 100)
	server.do(t, func() { s.conn.ResumeReceiving() })
	got := s.recorder.waitForFrames(t, 100)
	sameFrames(t, "server received", got, want)
}
