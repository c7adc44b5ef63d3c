package quorum

import (
	"context"
	"fmt"
	"log/slog"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"sluice/core"
	"sluice/core/metadata"
	"sluice/core/peer"
	"sluice/core/wire"
	"sluice/sim/kernel"
	"sluice/sim/simdisk"
)

// This file is a harness that runs several Quorum members with every input
// under a test's control, so that a test (or a script under testdata/) can
// say exactly which message arrives when:
//
//   - Each node has a manual clock: its timers fire only when the test
//     advances that node's time (elapse), and a zero-delay callback runs
//     when the harness settles.
//   - Nodes talk through a scripted network: every frame sent waits in one
//     queue until the test delivers it (or drops it, which breaks its
//     connection, as a cut would). Requests go through the real peer.Client
//     and the real wire encoding; the receiving node's HandleRequest answers.
//   - Each node has a simulated disk (sim/simdisk) whose syncs complete when
//     the harness settles, unless the test stalls that disk.
//
// Nothing waits on wall-clock time, and every run of a script is identical.

// testCluster is a set of nodes and the network between them.
type testCluster struct {
	t      *testing.T
	kernel *kernel.Kernel
	config Config // the shared settings; NodeID is set per node
	nodes  map[int32]*testNode
	ids    []int32 // every node, sorted

	// queue holds the frames sent and not yet delivered, in send order.
	queue []*message
	// cut holds the links (from, to) a partition cuts.
	cut map[[2]int32]bool
	// out receives the trace: messages sent, and what the quorum logs.
	out *strings.Builder
	// conns are every connection ever dialed, to break those of a node
	// that crashes.
	conns []*scriptConn
	// buggify, when set, switches every BUGGIFY site on for every node
	// (small snapshot chunks).
	buggify bool
}

// testNode is one member: its clock, disk and, while it runs, its Quorum.
type testNode struct {
	cluster *testCluster
	id      int32
	process *kernel.Process
	clock   *manualClock
	disk    *simdisk.Disk
	peers   *peer.Client
	quorum  *Quorum
	state   *testStateMachine
	// stalled holds sync completions back (disk-stall): held are the
	// completions waiting, in the order the disk delivered them.
	stalled bool
	held    []func()
}

const (
	testElectionTimeout = 100 * time.Millisecond
	testFetchTimeout    = 200 * time.Millisecond
	testRequestTimeout  = 100 * time.Millisecond
)

// newTestCluster builds voters 1..voters and observers after them, all
// started.
func newTestCluster(t *testing.T, voters, observers int, snapshotEvery int) *testCluster {
	return newTestClusterWith(t, voters, observers, snapshotEvery, false)
}

func newTestClusterWith(t *testing.T, voters, observers int, snapshotEvery int, buggify bool) *testCluster {
	c := &testCluster{
		buggify: buggify,
		t:       t,
		kernel:  kernel.NewKernel(1, nil),
		nodes:   map[int32]*testNode{},
		cut:     map[[2]int32]bool{},
		out:     &strings.Builder{},
		config: Config{
			Voters:               map[int32]string{},
			ElectionTimeout:      testElectionTimeout,
			FetchTimeout:         testFetchTimeout,
			RequestTimeout:       testRequestTimeout,
			SnapshotEveryRecords: snapshotEvery,
		},
	}
	for id := int32(1); id <= int32(voters); id++ {
		c.config.Voters[id] = nodeAddress(id)
	}
	for id := int32(1); id <= int32(voters+observers); id++ {
		n := &testNode{cluster: c, id: id, process: kernel.NewProcess(fmt.Sprintf("n%d", id))}
		n.disk = simdisk.New(c.kernel, n.process, kernel.NewRand(1, fmt.Sprintf("disk/%d", id)), simdisk.Faults{})
		n.clock = newManualClock()
		c.nodes[id] = n
		c.ids = append(c.ids, id)
	}
	for _, id := range c.ids {
		c.nodes[id].start()
	}
	c.settle()
	return c
}

func nodeAddress(id int32) string { return fmt.Sprintf("n%d:9093", id) }

// start opens the node's Quorum on its disk.
func (n *testNode) start() {
	c := n.cluster
	w := core.World{
		Clock:   n.clock,
		FS:      &gatedFS{FS: n.disk, node: n},
		Net:     &scriptNetwork{cluster: c, from: n.id},
		Entropy: kernel.NewRand(uint64(n.id), fmt.Sprintf("entropy/%d/%d", n.id, n.process.Incarnation())),
		Log:     slog.New(&traceLogHandler{out: c.out, node: n.id}),
		Halt: func(reason error) {
			c.t.Fatalf("node %d halted: %v", n.id, reason)
		},
	}
	if c.buggify {
		w.Buggify = core.NewBuggify(w.Entropy, 1, 1)
		// Time moves only when the script says, and stabilize does not
		// move it: a sync round whose start BUGGIFY delayed would never
		// begin, and nothing would commit.
		w.Buggify.Disable(core.BuggifyLogSyncDelayed)
	}
	config := c.config
	config.NodeID = n.id
	n.peers = peer.New(w, fmt.Sprintf("quorum-%d", n.id))
	if n.state == nil {
		n.state = &testStateMachine{}
	}
	n.state.applied = nil // a new process rebuilds its state
	q, err := Open(w, "__cluster_metadata-0", config, n.peers, n.state, n.state.apply)
	if err != nil {
		c.t.Fatalf("node %d: Open: %v", n.id, err)
	}
	n.quorum = q
}

// crash kills the node's process: timers, queued frames and unsynced
// writes are lost; connections to it break.
func (n *testNode) crash() {
	c := n.cluster
	n.process.Crash()
	n.disk.Crash()
	n.stalled, n.held = false, nil
	n.clock.reset()
	n.quorum = nil
	var kept []*message
	for _, m := range c.queue {
		if m.conn.from == n.id || m.conn.to == n.id {
			m.conn.breakConnection()
			continue
		}
		kept = append(kept, m)
	}
	c.queue = kept
	for _, conn := range c.conns {
		if conn.from == n.id || conn.to == n.id {
			conn.breakConnection()
		}
	}
}

// restart starts a new process on the node's disk.
func (n *testNode) restart() {
	n.process.Restart()
	n.start()
}

// settle runs everything that is due without any input from the test:
// zero-delay callbacks and disk completions, until nothing more is.
func (c *testCluster) settle() {
	for {
		progress := false
		for _, id := range c.ids {
			if c.nodes[id].clock.runReady() {
				progress = true
			}
		}
		// Disk completions are kernel events a nanosecond or so apart;
		// a stalled disk's are stallLatency away.
		before := c.kernel.Steps()
		c.kernel.RunUntil(c.kernel.Now() + int64(settleHorizon))
		if !progress && c.kernel.Steps() == before {
			return
		}
	}
}

// deliver delivers the frames queued now that match the filter (those sent
// while delivering wait for the next call), dropping those on cut links or
// named in drop. It reports how many it delivered or dropped.
func (c *testCluster) deliver(match func(*message) bool, drop func(*message) bool) int {
	pending := c.queue
	c.queue = nil
	count := 0
	for _, m := range pending {
		if !match(m) {
			c.queue = append(c.queue, m)
			continue
		}
		count++
		switch {
		case m.conn.broken:
			// Its connection broke after it was sent (a request
			// timed out, a node crashed).
			c.printf("lost %s (connection closed)", m.describe())
		case c.cut[[2]int32{m.from(), m.to()}] || drop(m):
			c.printf("dropped %s", m.describe())
			m.conn.breakConnection()
		default:
			m.deliver()
		}
		c.settle()
	}
	return count
}

// stabilize delivers until no frame is left.
func (c *testCluster) stabilize() {
	for rounds := 0; len(c.queue) > 0; rounds++ {
		if rounds > stabilizeRoundsMax {
			c.t.Fatalf("stabilize: still %d frames after %d rounds", len(c.queue), rounds)
		}
		c.deliver(func(*message) bool { return true }, func(*message) bool { return false })
	}
}

// settleHorizon is how far kernel time (which only the disks use) moves in
// one settle step.
const settleHorizon = time.Millisecond

// stabilizeRoundsMax bounds stabilize, so a livelock fails the test.
const stabilizeRoundsMax = 1000

func (c *testCluster) printf(format string, args ...any) {
	fmt.Fprintf(c.out, format+"\n", args...)
}

// manualClock is a node's clock: time moves only when the test says.
type manualClock struct {
	now     time.Duration // since the test began
	started time.Duration // when the current process started
	timers  []*manualTimer
	ready   []*manualTimer
	seq     uint64
}

type manualTimer struct {
	at      time.Duration
	seq     uint64
	f       func()
	stopped bool
	fired   bool
}

func newManualClock() *manualClock { return &manualClock{} }

var testEpoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func (c *manualClock) Now() time.Time         { return testEpoch.Add(c.now) }
func (c *manualClock) Elapsed() time.Duration { return c.now - c.started }

func (c *manualClock) AfterFunc(d time.Duration, f func()) core.Timer {
	c.seq++
	t := &manualTimer{at: c.now + max(d, 0), seq: c.seq, f: f}
	if d <= 0 {
		c.ready = append(c.ready, t)
	} else {
		c.timers = append(c.timers, t)
	}
	return t
}

func (t *manualTimer) Stop() bool {
	if t.stopped || t.fired {
		return false
	}
	t.stopped = true
	return true
}

// runReady runs the zero-delay callbacks, reporting whether there were any.
func (c *manualClock) runReady() bool {
	ran := false
	for len(c.ready) > 0 {
		t := c.ready[0]
		c.ready = c.ready[1:]
		if !t.stopped && !t.fired {
			t.fired = true
			ran = true
			t.f()
		}
	}
	return ran
}

// advance moves time forward by d, firing each timer due on the way in
// time order; settle runs after each.
func (c *manualClock) advance(d time.Duration, settle func()) {
	end := c.now + d
	for {
		sort.SliceStable(c.timers, func(i, j int) bool {
			if c.timers[i].at != c.timers[j].at {
				return c.timers[i].at < c.timers[j].at
			}
			return c.timers[i].seq < c.timers[j].seq
		})
		var next *manualTimer
		for len(c.timers) > 0 && next == nil {
			t := c.timers[0]
			c.timers = c.timers[1:]
			if !t.stopped && !t.fired {
				next = t
			}
		}
		if next == nil || next.at > end {
			if next != nil {
				c.timers = append(c.timers, next)
			}
			c.now = end
			return
		}
		c.now = next.at
		next.fired = true
		next.f()
		settle()
	}
}

// reset forgets every timer: the process died.
func (c *manualClock) reset() {
	c.timers, c.ready = nil, nil
	c.started = c.now
}

// scriptNetwork is one node's view of the scripted network.
type scriptNetwork struct {
	cluster *testCluster
	from    int32
}

// scriptConn is one connection: the dialer sends requests, the listener
// answers them in order.
type scriptConn struct {
	cluster  *testCluster
	from, to int32
	handler  core.Handler // the dialer's
	broken   bool
	// answers are the answers owed, in request order; an answer leaves
	// once every earlier one has.
	answers []*answerSlot
}

type answerSlot struct {
	frame []byte
	ready bool
}

func (n *scriptNetwork) Dial(addr string, h core.Handler) core.Conn {
	var to int32
	if _, err := fmt.Sscanf(addr, "n%d:9093", &to); err != nil {
		panic(fmt.Sprintf("harness: bad address %q", addr))
	}
	conn := &scriptConn{cluster: n.cluster, from: n.from, to: to, handler: h}
	n.cluster.conns = append(n.cluster.conns, conn)
	return conn
}

func (c *scriptConn) Send(frame []byte) bool {
	if c.broken {
		return false
	}
	c.cluster.send(&message{conn: c, frame: frame, request: true})
	return true
}

func (c *scriptConn) Close()             { c.broken = true }
func (c *scriptConn) RemoteAddr() string { return nodeAddress(c.to) }
func (c *scriptConn) PauseReceiving()    {}
func (c *scriptConn) ResumeReceiving()   {}

// breakConnection breaks the connection; the dialer hears of it.
func (c *scriptConn) breakConnection() {
	if c.broken {
		return
	}
	c.broken = true
	if n := c.cluster.nodes[c.from]; n.quorum != nil {
		n.clock.AfterFunc(0, func() { c.handler.Closed(fmt.Errorf("harness: connection broken")) })
	}
}

// message is one frame in flight: a request from the dialer or an answer
// from the listener.
type message struct {
	conn    *scriptConn
	frame   []byte
	request bool
	// decoded for the trace
	body kmsg.Request
	resp kmsg.Response
}

func (m *message) from() int32 {
	if m.request {
		return m.conn.from
	}
	return m.conn.to
}

func (m *message) to() int32 {
	if m.request {
		return m.conn.to
	}
	return m.conn.from
}

func (c *testCluster) send(m *message) {
	if m.request {
		req, err := wire.DecodeRequest(m.frame)
		if err != nil {
			c.t.Fatalf("harness: undecodable request: %v", err)
		}
		m.body = req.Body
	}
	c.queue = append(c.queue, m)
	c.printf("%s", m.describe())
}

// deliver hands the frame to its receiver.
func (m *message) deliver() {
	c := m.conn.cluster
	target := c.nodes[m.to()]
	if target.quorum == nil {
		m.conn.breakConnection()
		return
	}
	if !m.request {
		m.conn.handler.Frame(m.frame)
		return
	}
	req, err := wire.DecodeRequest(m.frame)
	if err != nil {
		c.t.Fatalf("harness: %v", err)
	}
	slot := &answerSlot{}
	conn := m.conn
	conn.answers = append(conn.answers, slot)
	q := target.quorum
	handled := q.HandleRequest(req.Body, func(resp kmsg.Response) {
		if conn.broken || target.quorum != q {
			return
		}
		slot.frame, slot.ready = wire.AppendResponse(nil, req.Header, resp), true
		for len(conn.answers) > 0 && conn.answers[0].ready {
			frame := conn.answers[0].frame
			conn.answers = conn.answers[1:]
			_, decoded, err := wire.DecodeResponse(frame, req.Body)
			if err != nil {
				c.t.Fatalf("harness: %v", err)
			}
			c.send(&message{conn: conn, frame: frame, resp: decoded})
		}
	})
	if !handled {
		c.t.Fatalf("harness: node %d does not handle %s", target.id, kmsg.NameForKey(req.Header.Key))
	}
}

// traceLogHandler writes what the quorum logs at Info and above into the
// trace, one line per record: "n1: became leader epoch=2 ...".
type traceLogHandler struct {
	out   *strings.Builder
	node  int32
	attrs []slog.Attr
}

func (h *traceLogHandler) Enabled(_ context.Context, level slog.Level) bool {
	return level >= slog.LevelInfo
}

func (h *traceLogHandler) Handle(_ context.Context, r slog.Record) error {
	var b strings.Builder
	fmt.Fprintf(&b, "n%d: %s", h.node, r.Message)
	if r.Level >= slog.LevelWarn {
		b.WriteString(" (" + r.Level.String() + ")")
	}
	r.Attrs(func(a slog.Attr) bool {
		fmt.Fprintf(&b, " %s=%v", a.Key, a.Value)
		return true
	})
	h.out.WriteString(b.String() + "\n")
	return nil
}

func (h *traceLogHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	// The node is already in every line; other With attributes are
	// dropped so lines stay short.
	return h
}

func (h *traceLogHandler) WithGroup(string) slog.Handler { return h }

// testStateMachine is the metadata state in tests: the values of the
// committed records, in order, each a Config record's value.
type testStateMachine struct {
	applied    []string
	lastOffset int64
}

func (s *testStateMachine) apply(offset int64, r metadata.Record) {
	s.applied = append(s.applied, fmt.Sprintf("%d:%s", offset, *r.Config.Value))
	s.lastOffset = offset
}

func (s *testStateMachine) Snapshot() (int64, []metadata.Record) {
	records := make([]metadata.Record, 0, len(s.applied))
	for _, value := range s.applied {
		records = append(records, testRecord(value))
	}
	if len(s.applied) == 0 {
		return -1, records
	}
	return s.lastOffset, records
}

func (s *testStateMachine) Restore(lastOffset int64, records []metadata.Record) error {
	s.applied = nil
	for _, r := range records {
		s.applied = append(s.applied, *r.Config.Value)
	}
	s.lastOffset = lastOffset
	return nil
}

// testRecord is the record a test proposes: a topic config whose value
// names the proposal.
func testRecord(value string) metadata.Record {
	return metadata.Record{Config: &metadata.ConfigRecord{ResourceType: metadata.ResourceTopic, ResourceName: "t", Name: "k", Value: &value}}
}

// gatedFS is a node's disk with sync completions it can hold back: while
// the node is stalled, a completed sync is not reported (the node goes on
// believing its data unsynced) until the test resumes the disk.
type gatedFS struct {
	core.FS
	node *testNode
}

type gatedFile struct {
	core.File
	node *testNode
}

func (g *gatedFS) OpenFile(name string, create bool) (core.File, error) {
	f, err := g.FS.OpenFile(name, create)
	if err != nil {
		return nil, err
	}
	return &gatedFile{File: f, node: g.node}, nil
}

func (g *gatedFS) SyncDir(dir string, done func(error)) {
	g.FS.SyncDir(dir, g.node.gate(done))
}

func (f *gatedFile) Sync(done func(error)) { f.File.Sync(f.node.gate(done)) }

// gate wraps a sync completion so that a stalled node holds it.
func (n *testNode) gate(done func(error)) func(error) {
	process := n.process.Incarnation()
	return func(err error) {
		if !n.stalled {
			done(err)
			return
		}
		n.held = append(n.held, func() {
			if n.process.Incarnation() == process {
				done(err)
			}
		})
	}
}

// resume reports the held completions, in order, and stops holding.
func (n *testNode) resume() {
	n.stalled = false
	held := n.held
	n.held = nil
	for _, f := range held {
		f()
	}
}
