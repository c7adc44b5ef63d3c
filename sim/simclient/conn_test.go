package simclient

import (
	"errors"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"sluice/core"
	"sluice/core/wire"
	"sluice/sim/kernel"
	"sluice/sim/simnet"
)

// fakeBroker answers ApiVersions like a broker serving every pinned version
// and does whatever answer says with anything else.
type fakeBroker struct {
	answer   func(conn core.Conn, req *wire.Request)
	requests []int16 // API keys received after ApiVersions, in order
}

func (f *fakeBroker) Accept(c core.Conn) core.Handler { return &fakeHandler{broker: f, conn: c} }

type fakeHandler struct {
	broker *fakeBroker
	conn   core.Conn
}

func (h *fakeHandler) Frame(frame []byte) {
	req, err := wire.DecodeRequest(frame)
	if err != nil {
		panic(err)
	}
	if req.Header.Key == 18 {
		resp := req.Body.ResponseKind().(*kmsg.ApiVersionsResponse)
		for key, version := range pinnedVersions {
			resp.ApiKeys = append(resp.ApiKeys, kmsg.ApiVersionsResponseApiKey{ApiKey: key, MaxVersion: version})
		}
		resp.SetVersion(req.Header.Version)
		h.conn.Send(wire.AppendResponse(nil, req.Header, resp))
		return
	}
	h.broker.requests = append(h.broker.requests, req.Header.Key)
	if h.broker.answer != nil {
		h.broker.answer(h.conn, req)
	}
}

func (h *fakeHandler) Closed(error) {}

// fakeSetup is a client and a fake broker listening on testAddress.
func fakeSetup(t *testing.T, answer func(core.Conn, *wire.Request)) (*kernel.Kernel, *Client, *fakeBroker) {
	t.Helper()
	k := kernel.NewKernel(7, nil)
	network := simnet.New(k, kernel.NewRand(7, "net"), simnet.Faults{LatencyMin: time.Millisecond, LatencyMax: time.Millisecond})
	f := &fakeBroker{answer: answer}
	if err := network.Endpoint("n1", kernel.NewProcess("n1")).Listen(testAddress, f); err != nil {
		t.Fatal(err)
	}
	c := New(k, network, Config{Name: "c1", Bootstrap: []string{testAddress}, RequestTimeout: 100 * time.Millisecond})
	return k, c, f
}

type answerOrError struct {
	resp kmsg.Response
	err  error
}

// request sends req and returns a pointer its outcome lands in.
func request(c *Client, req kmsg.Request) *answerOrError {
	outcome := &answerOrError{}
	c.RequestAddress(testAddress, req, func(resp kmsg.Response, err error) { outcome.resp, outcome.err = resp, err })
	return outcome
}

func TestRequestsAreAnsweredInOrderAtThePinnedVersion(t *testing.T) {
	k, c, f := fakeSetup(t, func(conn core.Conn, req *wire.Request) {
		resp := req.Body.ResponseKind()
		resp.SetVersion(req.Header.Version)
		if m, ok := resp.(*kmsg.MetadataResponse); ok {
			m.ControllerID = req.Header.Correlation // lets the test see which answer it got
		}
		conn.Send(wire.AppendResponse(nil, req.Header, resp))
	})
	first, second := request(c, kmsg.NewPtrMetadataRequest()), request(c, kmsg.NewPtrMetadataRequest())
	k.RunUntil(int64(time.Second))
	for i, outcome := range []*answerOrError{first, second} {
		if outcome.err != nil {
			t.Fatalf("request %d: %v", i, outcome.err)
		}
		m := outcome.resp.(*kmsg.MetadataResponse)
		if m.Version != pinnedVersions[3] {
			t.Errorf("request %d answered at version %d, want the pinned %d", i, m.Version, pinnedVersions[3])
		}
		// Correlation 0 went to ApiVersions; the requests follow.
		if m.ControllerID != int32(i+1) {
			t.Errorf("request %d got the answer to correlation %d", i, m.ControllerID)
		}
	}
	if len(f.requests) != 2 {
		t.Fatalf("broker saw %d requests after the handshake, want 2", len(f.requests))
	}
}

func TestTimeoutClosesTheConnectionAndLeavesEveryWrittenRequestUnknown(t *testing.T) {
	k, c, _ := fakeSetup(t, nil) // never answers
	first, second := request(c, kmsg.NewPtrMetadataRequest()), request(c, kmsg.NewPtrMetadataRequest())
	k.RunUntil(int64(time.Second))
	if !errors.Is(first.err, ErrRequestTimeout) || !errors.Is(second.err, ErrRequestTimeout) {
		t.Fatalf("errors %v and %v, want request timeouts", first.err, second.err)
	}
	if !IsUnknownOutcome(first.err) {
		t.Fatalf("a timed-out request must count as unknown outcome")
	}
	if c.Stats().ConnectionsLost != 1 || c.Stats().RequestsTimedOut != 1 {
		t.Fatalf("stats %+v, want one connection lost to a timeout", c.Stats())
	}
}

func TestMismatchedCorrelationIsAProtocolError(t *testing.T) {
	k, c, _ := fakeSetup(t, func(conn core.Conn, req *wire.Request) {
		resp := req.Body.ResponseKind()
		resp.SetVersion(req.Header.Version)
		header := req.Header
		header.Correlation += 100
		conn.Send(wire.AppendResponse(nil, header, resp))
	})
	outcome := request(c, kmsg.NewPtrMetadataRequest())
	k.RunUntil(int64(time.Second))
	if !errors.Is(outcome.err, ErrProtocol) || !IsUnknownOutcome(outcome.err) {
		t.Fatalf("error %v, want a protocol error counted as unknown outcome", outcome.err)
	}
}

func TestRefusedDialMeansNotDelivered(t *testing.T) {
	k := kernel.NewKernel(7, nil)
	network := simnet.New(k, kernel.NewRand(7, "net"), simnet.Faults{LatencyMin: time.Millisecond, LatencyMax: time.Millisecond})
	c := New(k, network, Config{Name: "c1", Bootstrap: []string{testAddress}})
	outcome := request(c, kmsg.NewPtrMetadataRequest())
	k.RunUntil(int64(time.Second))
	if !errors.Is(outcome.err, ErrNotDelivered) || IsUnknownOutcome(outcome.err) {
		t.Fatalf("error %v, want not delivered (a definite outcome)", outcome.err)
	}
}

func TestUnpinnedAPIIsRefusedWithoutSending(t *testing.T) {
	k, c, f := fakeSetup(t, nil)
	outcome := request(c, kmsg.NewPtrCreateTopicsRequest())
	if outcome.err != nil || outcome.resp != nil {
		t.Fatal("the callback ran inside the call")
	}
	k.RunUntil(int64(time.Second))
	if !errors.Is(outcome.err, ErrUnsupportedVersion) {
		t.Fatalf("error %v, want unsupported version", outcome.err)
	}
	if len(f.requests) != 0 {
		t.Fatalf("broker received %v", f.requests)
	}
}

func TestPendingRequestsAreBounded(t *testing.T) {
	k, c, _ := fakeSetup(t, nil)
	var outcomes []*answerOrError
	for range pendingRequestsMax + 1 {
		outcomes = append(outcomes, request(c, kmsg.NewPtrMetadataRequest()))
	}
	k.RunUntil(int64(50 * time.Millisecond)) // before the timeout
	if last := outcomes[len(outcomes)-1]; !errors.Is(last.err, ErrTooManyPending) {
		t.Fatalf("request past the bound: %v, want too many pending", last.err)
	}
	for i, outcome := range outcomes[:pendingRequestsMax] {
		if outcome.err != nil || outcome.resp != nil {
			t.Fatalf("request %d within the bound completed early: %v", i, outcome.err)
		}
	}
}

func TestRequestTimingOutBeforeTheDialLeavesTheDialAlone(t *testing.T) {
	k := kernel.NewKernel(7, nil)
	network := simnet.New(k, kernel.NewRand(7, "net"), simnet.Faults{LatencyMin: time.Millisecond, LatencyMax: time.Millisecond})
	// A reconnect backoff longer than the request timeout: a request
	// waiting for the redial times out first, and must not push the
	// redial back.
	c := New(k, network, Config{
		Name: "c1", Bootstrap: []string{testAddress}, RequestTimeout: 100 * time.Millisecond,
		ReconnectBackoffMin: 400 * time.Millisecond, ReconnectBackoffMax: 400 * time.Millisecond,
	})
	f := &fakeBroker{answer: func(conn core.Conn, req *wire.Request) {
		resp := req.Body.ResponseKind()
		resp.SetVersion(req.Header.Version)
		conn.Send(wire.AppendResponse(nil, req.Header, resp))
	}}
	k.Schedule(int64(300*time.Millisecond), nil, "listen", func() {
		if err := network.Endpoint("n1", kernel.NewProcess("n1")).Listen(testAddress, f); err != nil {
			t.Error(err)
		}
	})
	var answered *answerOrError
	var outcomes []*answerOrError
	var send func()
	send = func() {
		outcome := &answerOrError{}
		outcomes = append(outcomes, outcome)
		c.RequestAddress(testAddress, kmsg.NewPtrMetadataRequest(), func(resp kmsg.Response, err error) {
			outcome.resp, outcome.err = resp, err
			if err == nil {
				answered = outcome
				return
			}
			c.After(10*time.Millisecond, "retry", send)
		})
	}
	send()
	if !k.RunWhile(int64(5*time.Second), func() bool { return answered == nil }) {
		t.Fatalf("no request answered within 5s; outcomes: %d, last error %v", len(outcomes), outcomes[len(outcomes)-1].err)
	}
	for _, outcome := range outcomes[:len(outcomes)-1] {
		if !errors.Is(outcome.err, ErrNotDelivered) || IsUnknownOutcome(outcome.err) {
			t.Fatalf("error %v before the connection worked, want not delivered", outcome.err)
		}
	}
}
