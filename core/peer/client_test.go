package peer_test

import (
	"errors"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"sluice/core"
	"sluice/core/peer"
	"sluice/core/wire"
	"sluice/sim"
	"sluice/sim/kernel"
	"sluice/sim/simnet"
)

// echoServer answers Metadata requests with its own node id, after an
// optional silence.
type echoServer struct {
	node   int32
	silent bool
}

func (s *echoServer) Accept(c core.Conn) core.Handler { return &echoConn{server: s, conn: c} }

type echoConn struct {
	server *echoServer
	conn   core.Conn
}

func (e *echoConn) Frame(frame []byte) {
	if e.server.silent {
		return
	}
	req, err := wire.DecodeRequest(frame)
	if err != nil {
		panic(err)
	}
	resp := req.Body.ResponseKind().(*kmsg.MetadataResponse)
	resp.ControllerID = e.server.node
	e.conn.Send(wire.AppendResponse(nil, req.Header, resp))
}
func (e *echoConn) Closed(error) {}

func TestRequestsAnsweredAndFailuresReported(t *testing.T) {
	k := kernel.NewKernel(1, nil)
	network := simnet.New(k, kernel.NewRand(1, "net"), simnet.Faults{LatencyMin: time.Millisecond, LatencyMax: 2 * time.Millisecond})
	client := sim.NewMachine(k, network, "client", sim.MachineOptions{})
	server := sim.NewMachine(k, network, "server", sim.MachineOptions{})
	echo := &echoServer{node: 2}
	if err := server.Net.Listen("server:9093", echo); err != nil {
		t.Fatal(err)
	}
	c := peer.New(client.World(), "test")
	c.SetAddress(2, "server:9093")

	var answers []int32
	var failures []error
	request := func(timeout time.Duration) {
		c.Request(2, &kmsg.MetadataRequest{Version: 12}, timeout, func(resp kmsg.Response, err error) {
			if err != nil {
				failures = append(failures, err)
				return
			}
			answers = append(answers, resp.(*kmsg.MetadataResponse).ControllerID)
		})
	}
	for range 3 {
		request(time.Second)
	}
	k.RunUntil(k.Now() + int64(time.Second))
	if len(answers) != 3 || answers[0] != 2 || len(failures) != 0 {
		t.Fatalf("answers %v failures %v", answers, failures)
	}

	echo.silent = true
	request(100 * time.Millisecond)
	k.RunUntil(k.Now() + int64(time.Second))
	if len(failures) != 1 || !errors.Is(failures[0], peer.ErrTimeout) {
		t.Fatalf("want one timeout, got %v", failures)
	}

	// After the backoff, a new connection serves again.
	echo.silent = false
	request(time.Second)
	k.RunUntil(k.Now() + int64(3*time.Second))
	if len(answers) != 4 {
		t.Fatalf("no answer after reconnect: answers %v failures %v", answers, failures)
	}

	c.Request(9, &kmsg.MetadataRequest{Version: 12}, time.Second, func(_ kmsg.Response, err error) { failures = append(failures, err) })
	k.RunUntil(k.Now() + int64(time.Second))
	if !errors.Is(failures[len(failures)-1], peer.ErrUnknownPeer) {
		t.Fatalf("unknown peer: %v", failures)
	}

	server.Crash()
	request(time.Second)
	k.RunUntil(k.Now() + int64(3*time.Second))
	if last := failures[len(failures)-1]; !errors.Is(last, peer.ErrConnectionLost) && !errors.Is(last, peer.ErrBackoff) {
		t.Fatalf("crashed peer: %v", failures)
	}
}
