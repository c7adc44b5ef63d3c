package simclient

import (
	"fmt"
	"slices"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"sluice/core"
	"sluice/sim/kernel"
	"sluice/sim/simnet"
)

// Config is one client's settings. Zero durations take the defaults in
// limits.go.
type Config struct {
	// Name is the client's host name on the simulated network and its
	// name in traces; unique in a run, without a colon.
	Name string
	// ClientID is client.id, sent in every request header.
	ClientID string
	// Bootstrap lists broker addresses ("n1:9092") to ask for metadata
	// before any is known (bootstrap.servers).
	Bootstrap []string
	// AutoCreateTopics is allow.auto.create.topics: Metadata requests ask
	// the broker to create the topics they name.
	AutoCreateTopics bool

	RequestTimeout         time.Duration // request.timeout.ms
	ReconnectBackoffMin    time.Duration // reconnect.backoff.ms
	ReconnectBackoffMax    time.Duration // reconnect.backoff.max.ms
	MetadataRefreshBackoff time.Duration // retry.backoff.ms, for metadata

	// Codecs compress and decompress batches; nil: the client makes its
	// own at first use. A run may share one set among its clients and
	// machines (see sim.MachineOptions.Codecs).
	Codecs core.Codecs
}

func (c Config) withDefaults() Config {
	if c.ClientID == "" {
		c.ClientID = clientIDDefault
	}
	if c.RequestTimeout <= 0 {
		c.RequestTimeout = requestTimeoutDefault
	}
	if c.ReconnectBackoffMin <= 0 {
		c.ReconnectBackoffMin = reconnectBackoffMinDefault
	}
	if c.ReconnectBackoffMax < c.ReconnectBackoffMin {
		c.ReconnectBackoffMax = max(reconnectBackoffMaxDefault, c.ReconnectBackoffMin)
	}
	if c.MetadataRefreshBackoff <= 0 {
		c.MetadataRefreshBackoff = metadataRefreshBackoffDefault
	}
	return c
}

// Client is one simulated client machine: a process that can crash, an
// endpoint on the network, one connection per broker address, and a cache
// of the cluster's metadata. Producers and readers are built on it.
type Client struct {
	kernel   *kernel.Kernel
	process  *kernel.Process
	endpoint *simnet.Endpoint
	rng      randomSource
	config   Config

	conns     map[string]*Conn             // live connections by address; lookups only
	reconnect map[string]*reconnectBackoff // by address; lookups only
	metadata  metadataCache
	anyNext   int // round robin for RequestAny

	crashHooks   []func()
	restartHooks []func()
	stats        ClientStats

	// spareCalls are allocated calls not yet handed out (see newCall).
	spareCalls []call
	// startRefreshEvent is startRefresh as a func value, made once
	// rather than for every refresh scheduled.
	startRefreshEvent func()
	// codecSet compresses and decompresses batches; see codecs.
	codecSet core.Codecs
}

// callsPerBlock is how many calls newCall allocates at once.
const callsPerBlock = 32

// newCall returns a fresh call. Calls are allocated callsPerBlock at a
// time, as every request takes one, and one allocation each was a share
// of the client's cost. None is reused: each is handed out once, so a
// stale reference (a timeout that fired) can never see another request.
func (c *Client) newCall() *call {
	if len(c.spareCalls) == 0 {
		c.spareCalls = make([]call, callsPerBlock)
	}
	x := &c.spareCalls[0]
	c.spareCalls = c.spareCalls[1:]
	return x
}

// randomSource is the part of a kernel.NewRand stream the client draws
// from (jitter): a seeded stream, never global randomness.
type randomSource interface{ Float64() float64 }

// reconnectBackoff is how soon an address may be dialed again.
type reconnectBackoff struct {
	failures   int
	nextDialAt int64
}

// ClientStats counts what a client did, for a run's report.
type ClientStats struct {
	Requests           int64
	Dials              int64
	ConnectionsLost    int64
	RequestsTimedOut   int64
	MetadataRefreshes  int64
	Crashes, Restarts  int64
	UnknownOutcomes    int64
	NotDeliveredErrors int64
}

// New attaches a client machine to the network. Its process is running.
func New(k *kernel.Kernel, network *simnet.Network, config Config) *Client {
	config = config.withDefaults()
	if len(config.Bootstrap) == 0 {
		panic(fmt.Sprintf("simclient: client %q has no bootstrap address", config.Name))
	}
	process := kernel.NewProcess(config.Name)
	c := &Client{
		kernel:   k,
		process:  process,
		endpoint: network.Endpoint(config.Name, process),
		rng:      kernel.NewRand(k.Seed(), "simclient/"+config.Name),
		config:   config,
	}
	c.startRefreshEvent = c.startRefresh
	c.reset()
	return c
}

// reset forgets everything a process keeps in memory.
func (c *Client) reset() {
	c.conns = map[string]*Conn{}
	c.reconnect = map[string]*reconnectBackoff{}
	c.metadata = newMetadataCache(c.metadata.wanted)
}

// Name is the client's host and trace name.
func (c *Client) Name() string { return c.config.Name }

// Process is the client's process, which owns every event it schedules.
func (c *Client) Process() *kernel.Process { return c.process }

// Alive reports whether the client's process is running.
func (c *Client) Alive() bool { return c.process.Alive() }

// Stats returns the client's counters.
func (c *Client) Stats() ClientStats { return c.stats }

// Now is virtual time in nanoseconds.
func (c *Client) Now() int64 { return c.kernel.Now() }

// WallClock is the client's wall-clock time, for record timestamps.
func (c *Client) WallClock() time.Time { return WallClockAt(c.kernel.Now()) }

// WallClockAt is what a client's wall clock reads at a virtual time: the
// time a record it stamps carries.
func WallClockAt(virtual int64) time.Time { return wallClockEpoch.Add(time.Duration(virtual)) }

// After runs fn after d on the client's process: a crash cancels it, and
// nothing else can (no caller needs to, so the kernel reuses the event).
func (c *Client) After(d time.Duration, label string, fn func()) {
	c.kernel.Post(int64(d), c.process, label, kernel.Func(fn))
}

// AfterAction is After with a kernel.Action to run: for a caller that
// keeps one, and would otherwise allocate a closure every time.
func (c *Client) AfterAction(d time.Duration, label string, action kernel.Action) {
	c.kernel.Post(int64(d), c.process, label, action)
}

// later runs fn on the next turn of the loop, never inside the caller.
func (c *Client) later(fn func()) { c.laterAction(kernel.Func(fn)) }

// laterAction is later with a kernel.Action.
func (c *Client) laterAction(action kernel.Action) {
	c.kernel.Post(0, c.process, "simclient.later", action)
}

// note records a line in the run's trace under the client's name.
func (c *Client) note(text string) { c.kernel.Trace().Note(c.kernel.Now(), c.config.Name, text) }

// OnCrash registers f to run when the client crashes, before its state
// vanishes: producers and readers record their operations in flight as
// info there. OnRestart registers f to run after a restart.
func (c *Client) OnCrash(f func())   { c.crashHooks = append(c.crashHooks, f) }
func (c *Client) OnRestart(f func()) { c.restartHooks = append(c.restartHooks, f) }

// Crash kills the client's process: every pending timer and delivery dies,
// its connections are reset, and its memory (connections, metadata) is
// gone. Components record their operations in flight as info first.
func (c *Client) Crash() {
	if !c.process.Alive() {
		return
	}
	c.stats.Crashes++
	c.note("crash")
	for _, f := range c.crashHooks {
		f()
	}
	c.process.Crash()
	c.endpoint.Crash()
	for _, address := range c.connectionAddresses() {
		c.conns[address].abandon()
	}
	c.reset()
}

// Restart starts a new process on the client machine.
func (c *Client) Restart() {
	if c.process.Alive() {
		return
	}
	c.stats.Restarts++
	c.process.Restart()
	c.note("restart")
	for _, f := range c.restartHooks {
		f()
	}
}

// connectionAddresses lists the live connections' addresses, sorted.
func (c *Client) connectionAddresses() []string {
	addresses := make([]string, 0, len(c.conns))
	for address := range c.conns {
		addresses = append(addresses, address)
	}
	slices.Sort(addresses)
	return addresses
}

// Request sends req to the broker with the given node id and calls done
// with its answer or an error, always from a later event.
func (c *Client) Request(node int32, req kmsg.Request, done func(kmsg.Response, error)) {
	c.requestNode(node, req, c.config.RequestTimeout, done)
}

// RequestFetch sends a Fetch to the broker with the given node id. The
// broker may hold an empty Fetch for its max wait before it answers, so
// the fetch is timed out no sooner than that wait plus
// fetchAnswerMargin, however short the request timeout: with the two
// close, every idle long poll timed out and took the connection, and any
// group request on it, with it (seed 361139). Real clients see to the
// same: kgo times a fetch out after RequestTimeoutOverhead + MaxWait,
// and Java's consumer long required request.timeout.ms above
// fetch.max.wait.ms.
func (c *Client) RequestFetch(node int32, req *kmsg.FetchRequest, done func(kmsg.Response, error)) {
	maxWait := time.Duration(max(req.MaxWaitMillis, 0)) * time.Millisecond
	c.requestNode(node, req, max(c.config.RequestTimeout, maxWait+fetchAnswerMargin), done)
}

// requestNode sends req to the broker with the given node id, with the
// given request timeout.
func (c *Client) requestNode(node int32, req kmsg.Request, timeout time.Duration, done func(kmsg.Response, error)) {
	address, ok := c.metadata.brokers[node]
	if !ok {
		c.later(func() { done(nil, fmt.Errorf("%w: node %d", ErrUnknownBroker, node)) })
		return
	}
	c.RequestAddressWithTimeout(address, req, timeout, done)
}

// RequestAny sends req to some broker: one already connected if any, else
// the known brokers and the bootstrap addresses in turn.
func (c *Client) RequestAny(req kmsg.Request, done func(kmsg.Response, error)) {
	candidates := c.metadata.brokerAddresses()
	for _, address := range c.config.Bootstrap {
		if !slices.Contains(candidates, address) {
			candidates = append(candidates, address)
		}
	}
	for _, address := range candidates {
		if conn := c.conns[address]; conn != nil && conn.state == connReady {
			c.RequestAddress(address, req, done)
			return
		}
	}
	address := candidates[c.anyNext%len(candidates)]
	c.anyNext++
	c.RequestAddress(address, req, done)
}

// RequestAddress sends req to a broker address, connecting first if needed.
func (c *Client) RequestAddress(address string, req kmsg.Request, done func(kmsg.Response, error)) {
	c.RequestAddressWithTimeout(address, req, c.config.RequestTimeout, done)
}

// RequestAddressWithTimeout is RequestAddress with a request timeout of
// its own (see Conn.SendWithTimeout).
func (c *Client) RequestAddressWithTimeout(address string, req kmsg.Request, timeout time.Duration, done func(kmsg.Response, error)) {
	if !c.process.Alive() {
		panic(fmt.Sprintf("simclient: %s sent a request while its process is down", c.config.Name))
	}
	c.stats.Requests++
	conn := c.conns[address]
	if conn == nil {
		delay := int64(0)
		if backoff := c.reconnect[address]; backoff != nil {
			delay = max(0, backoff.nextDialAt-c.kernel.Now())
		}
		c.stats.Dials++
		conn = newConn(c, address, delay)
		c.conns[address] = conn
	}
	// The connection counts the outcome (countOutcome) before it calls
	// done: a flag on the call rather than a closure around done, one
	// allocation less per request.
	conn.send(req, timeout, true, done)
}

// countOutcome counts a request's failure, if it failed, in the stats.
func (c *Client) countOutcome(err error) {
	switch {
	case IsUnknownOutcome(err):
		c.stats.UnknownOutcomes++
	case err != nil:
		c.stats.NotDeliveredErrors++
	}
}

// connectionWorked resets an address's backoff once its handshake is done.
func (c *Client) connectionWorked(conn *Conn) {
	delete(c.reconnect, conn.address)
}

// connectionClosed forgets a connection and backs its address off.
func (c *Client) connectionClosed(conn *Conn, cause error) {
	if c.conns[conn.address] == conn {
		delete(c.conns, conn.address)
	}
	c.stats.ConnectionsLost++
	if cause == ErrRequestTimeout {
		c.stats.RequestsTimedOut++
	}
	backoff := c.reconnect[conn.address]
	if backoff == nil {
		backoff = &reconnectBackoff{}
		c.reconnect[conn.address] = backoff
	}
	delay := c.config.ReconnectBackoffMin << min(backoff.failures, 16)
	delay = min(delay, c.config.ReconnectBackoffMax)
	// Kafka adds 20% jitter either way, so clients do not redial in step.
	delay = time.Duration(float64(delay) * (0.8 + 0.4*c.rng.Float64()))
	backoff.failures++
	backoff.nextDialAt = c.kernel.Now() + int64(delay)
	c.note("connection to " + conn.address + " closed: " + cause.Error())
}
