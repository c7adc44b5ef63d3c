package clusterworkload

import (
	"errors"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"sluice/core"
	"sluice/core/wire"
	"sluice/sim/kernel"
	"sluice/sim/simnet"
)

// admin is the workload's own administrative client: it creates the topics
// and asks who hosts which partition. simclient speaks only the APIs its
// producers and consumers need, at pinned versions, so the admin requests
// (CreateTopics, and Metadata for the replica sets simclient's cache does
// not keep) go out here, one request per connection, encoded with kmsg and
// framed by core/wire like any client's. It is a machine of its own on
// the network, which faults never touch.
type admin struct {
	kernel   *kernel.Kernel
	process  *kernel.Process
	endpoint *simnet.Endpoint
	timeout  time.Duration
	next     int32 // correlation ids
}

// adminHost is the admin client's host name.
const adminHost = "admin"

// errAdminTimeout is an admin request that got no answer in time.
var errAdminTimeout = errors.New("admin request timed out")

func newAdmin(k *kernel.Kernel, network *simnet.Network, timeout time.Duration) *admin {
	process := kernel.NewProcess(adminHost)
	return &admin{kernel: k, process: process, endpoint: network.Endpoint(adminHost, process), timeout: timeout}
}

// request sends req to address on a fresh connection and calls done once
// with the answer or an error, always from a later event.
func (a *admin) request(address string, req kmsg.Request, done func(kmsg.Response, error)) {
	exchange := &adminExchange{admin: a, req: req, done: done, correlation: a.next}
	a.next++
	exchange.conn = a.endpoint.Dial(address, exchange)
	exchange.conn.Send(wire.AppendRequest(nil, exchange.correlation, adminHost, req))
	exchange.cancelTimeout = a.kernel.Schedule(int64(a.timeout), a.process, "workload.admin-timeout", func() {
		exchange.finish(nil, errAdminTimeout)
	})
}

// adminExchange is one request on its connection.
type adminExchange struct {
	admin         *admin
	req           kmsg.Request
	done          func(kmsg.Response, error)
	conn          core.Conn
	correlation   int32
	cancelTimeout func() bool
	finished      bool
}

// Frame implements core.Handler: the one answer.
func (x *adminExchange) Frame(frame []byte) {
	correlation, resp, err := wire.DecodeResponse(frame, x.req)
	if err == nil && correlation != x.correlation {
		err = fmt.Errorf("admin: answer for correlation %d, want %d", correlation, x.correlation)
	}
	x.finish(resp, err)
}

// Closed implements core.Handler.
func (x *adminExchange) Closed(err error) {
	if err == nil {
		err = errors.New("connection closed")
	}
	x.finish(nil, err)
}

func (x *adminExchange) finish(resp kmsg.Response, err error) {
	if x.finished {
		return
	}
	x.finished = true
	x.cancelTimeout()
	x.conn.Close()
	x.done(resp, err)
}

// askEveryLiveNode sends each live node, in order, the request build
// makes, hands every answer (or error) to answered, and runs the
// simulation until all have come or deadline passes; it reports whether
// all came.
func (r *run) askEveryLiveNode(deadline int64, build func() kmsg.Request, answered func(n *node, resp kmsg.Response, err error)) bool {
	waiting := 0
	for _, n := range r.nodes {
		if !n.up {
			continue
		}
		waiting++
		r.admin.request(clientAddress(n.id), build(), func(resp kmsg.Response, err error) {
			waiting--
			answered(n, resp, err)
		})
	}
	return r.runWhile(deadline, func() bool { return waiting > 0 })
}
