package harness

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"sluice/jepsen/ports"
)

// ClusterOptions configures a cluster StartCluster launches.
type ClusterOptions struct {
	// Binary is the sluice binary every node runs.
	Binary string
	// Nodes is the cluster's size, 1..clusterNodesMax; every node is both
	// broker and controller.
	Nodes int
	// Dir holds node i's data in Dir/node-i and its output in
	// Dir/node-i.log, kept across restarts.
	Dir string
	// Settings are Kafka broker settings (key=value) for every node,
	// applied after ClusterSettingsDefault.
	Settings []string
	// LogLevel is the nodes' --log-level; empty means info.
	LogLevel string
}

// ClusterSettingsDefault shortens the timeouts that decide how fast a
// cluster notices a dead or cut-off node, so that a fault and its
// recovery fit in seconds rather than Kafka's tens of seconds, and keeps
// the offsets topic small. replica.lag.time.max.ms (30 s) cannot be set
// here: the broker does not accept it yet, so a follower cut off from its
// leader but not from the controller stays in the ISR that long.
var ClusterSettingsDefault = []string{
	"broker.session.timeout.ms=4000",
	"broker.heartbeat.interval.ms=500",
	"group.initial.rebalance.delay.ms=0",
	"offsets.topic.num.partitions=3",
}

// Cluster is N sluice nodes on loopback, each behind two proxies: one for
// its client listener (the address it advertises, which clients and the
// other nodes' replica fetchers use) and one for its controller listener
// (its address in every node's voter list). Every byte between two nodes
// or between a client and a node crosses a proxy, which attributes the
// connection to the process that opened it and obeys Links: so a
// partition cuts replication and the metadata quorum alike, and clients
// can be cut separately.
type Cluster struct {
	options ClusterOptions
	// Links is the fault table the proxies obey.
	Links   *Links
	nodes   []*Node
	proxies []*proxy

	mutex sync.Mutex
	// unexpectedExits are node exits the harness did not cause.
	unexpectedExits []NodeExit
	// clientLog receives every client's franz-go log (clients.go), nil
	// until the cluster is laid out.
	clientLog *os.File
}

// NodeExit is a node process that ended without the harness asking.
type NodeExit struct {
	Node    int
	At      time.Time
	Status  string
	LogTail string
}

// Node is one sluice process: its ports, data directory and flags stay
// the same across restarts. Its methods may be called from any goroutine.
type Node struct {
	ID      int
	cluster *Cluster
	// listen and controllerListen are the node's real listeners;
	// advertised and controllerProxy the proxies in front of them.
	listen, controllerListen    string
	advertised, controllerProxy string
	dataDir, logPath            string
	args                        []string

	mutex   sync.Mutex
	running *process
	paused  bool
}

// StartCluster starts every node, and returns once each one answers
// Metadata listing every broker. On error, whatever started is stopped.
func StartCluster(ctx context.Context, options ClusterOptions) (*Cluster, error) {
	switch {
	case options.Binary == "":
		return nil, errors.New("harness: no sluice binary")
	case options.Nodes < 1 || options.Nodes > clusterNodesMax:
		return nil, fmt.Errorf("harness: %d nodes: between 1 and %d", options.Nodes, clusterNodesMax)
	case options.Dir == "":
		return nil, errors.New("harness: no directory for the nodes")
	}
	if options.LogLevel == "" {
		options.LogLevel = "info"
	}
	if err := os.MkdirAll(options.Dir, 0o755); err != nil {
		return nil, fmt.Errorf("harness: %w", err)
	}
	c := &Cluster{options: options, Links: NewLinks(options.Nodes)}
	clientLog, err := os.Create(filepath.Join(options.Dir, clientLogName))
	if err != nil {
		return nil, fmt.Errorf("harness: %w", err)
	}
	c.clientLog = clientLog
	if err := c.layOut(); err != nil {
		return nil, errors.Join(err, c.Close())
	}
	for _, n := range c.nodes {
		if err := n.Start(); err != nil {
			return nil, errors.Join(err, c.Close())
		}
	}
	if err := c.WaitBrokers(ctx, clusterStartTimeout); err != nil {
		return nil, errors.Join(err, c.startFailure(), c.Close())
	}
	return c, nil
}

// startFailure says why a start failed as far as the nodes' logs tell:
// the nodes that exited on their own, with the end of their logs, or,
// when none did, the end of every node's log. The caller's directory may
// be a test's, gone by the time anyone reads the failure.
func (c *Cluster) startFailure() error {
	var failures []error
	for _, exit := range c.UnexpectedExits() {
		failures = append(failures, fmt.Errorf("node %d exited on its own during the start (%s); its log ends:\n%s",
			exit.Node, exit.Status, exit.LogTail))
	}
	if len(failures) > 0 {
		return errors.Join(failures...)
	}
	for _, n := range c.nodes {
		failures = append(failures, fmt.Errorf("node %d's log ends:\n%s", n.ID, logTail(n.logPath, startFailureLogTailBytesMax)))
	}
	return errors.Join(failures...)
}

// layOut picks every node's ports, starts the proxies and writes each
// node's flags.
func (c *Cluster) layOut() error {
	// Every node is laid out before any proxy accepts: a proxy names the
	// process behind a connection from the node list (identify), and a
	// connection can arrive as soon as its listener is open.
	type front struct {
		node     int
		listener net.Listener
		target   string
	}
	var fronts []front
	proxied := false
	defer func() {
		if !proxied {
			for _, f := range fronts {
				f.listener.Close()
			}
		}
	}()
	var voters []string
	for id := 1; id <= c.options.Nodes; id++ {
		n := &Node{
			ID:      id,
			cluster: c,
			dataDir: filepath.Join(c.options.Dir, "node-"+strconv.Itoa(id)),
			logPath: filepath.Join(c.options.Dir, "node-"+strconv.Itoa(id)+".log"),
		}
		var err error
		if n.listen, err = ports.Loopback(); err != nil {
			return err
		}
		if n.controllerListen, err = ports.Loopback(); err != nil {
			return err
		}
		for _, f := range []struct {
			target  string
			address *string
		}{{n.listen, &n.advertised}, {n.controllerListen, &n.controllerProxy}} {
			listener, err := listenLoopback()
			if err != nil {
				return err
			}
			fronts = append(fronts, front{id, listener, f.target})
			*f.address = listener.Addr().String()
		}
		voters = append(voters, strconv.Itoa(id)+"@"+n.controllerProxy)
		c.nodes = append(c.nodes, n)
	}
	for _, f := range fronts {
		c.proxies = append(c.proxies, startProxy(Endpoint(f.node), f.listener, f.target, c.Links, c.identify))
	}
	proxied = true
	for _, n := range c.nodes {
		n.args = []string{"broker",
			"--node-id", strconv.Itoa(n.ID),
			"--listen", n.listen,
			"--advertised", n.advertised,
			"--controller-listen", n.controllerListen,
			"--controllers", strings.Join(voters, ","),
			"--data", n.dataDir,
			"--log-level", c.options.LogLevel,
		}
		for _, setting := range slices.Concat(ClusterSettingsDefault, c.options.Settings) {
			n.args = append(n.args, "--set", setting)
		}
	}
	return nil
}

// identify says which endpoint opened a connection a proxy accepted: the
// node whose process holds the connecting socket, else Client.
func (c *Cluster) identify(conn net.Conn) Endpoint {
	byPid := map[int]Endpoint{}
	var candidates []int
	for _, n := range c.nodes {
		if pid := n.Pid(); pid > 0 {
			byPid[pid] = Endpoint(n.ID)
			candidates = append(candidates, pid)
		}
	}
	pid, err := connectingProcess(conn, candidates)
	if err != nil {
		return Client
	}
	return byPid[pid]
}

// Nodes lists the nodes, by id.
func (c *Cluster) Nodes() []*Node { return slices.Clone(c.nodes) }

// Node returns node id (1..N).
func (c *Cluster) Node(id int) *Node {
	if id < 1 || id > len(c.nodes) {
		panic(fmt.Sprintf("harness: no node %d in a cluster of %d", id, len(c.nodes)))
	}
	return c.nodes[id-1]
}

// Bootstrap is every node's advertised (proxied) client address, for
// clients' seed brokers.
func (c *Cluster) Bootstrap() []string {
	addresses := make([]string, len(c.nodes))
	for i, n := range c.nodes {
		addresses[i] = n.advertised
	}
	return addresses
}

// UnexpectedExits lists the node exits the harness did not cause: a crash
// of the broker itself, which is always a finding.
func (c *Cluster) UnexpectedExits() []NodeExit {
	c.mutex.Lock()
	defer c.mutex.Unlock()
	return slices.Clone(c.unexpectedExits)
}

// Close stops every node (SIGCONT, then SIGTERM, then SIGKILL after
// nodeStopTimeout) and the proxies. It reports the nodes that did not
// stop cleanly: a broker must shut down on SIGTERM with status 0.
func (c *Cluster) Close() error {
	var stopping sync.WaitGroup
	errs := make([]error, len(c.nodes))
	for i, n := range c.nodes {
		stopping.Add(1)
		go func() {
			defer stopping.Done()
			errs[i] = n.Stop(nodeStopTimeout)
		}()
	}
	stopping.Wait()
	for _, p := range c.proxies {
		p.Close()
	}
	if c.clientLog != nil {
		errs = append(errs, c.clientLog.Close())
	}
	return errors.Join(errs...)
}

// Start launches the node's process with its flags, unless it runs. It
// does not wait for it to serve (WaitReady does).
func (n *Node) Start() error {
	n.mutex.Lock()
	defer n.mutex.Unlock()
	if n.running != nil && n.running.alive() {
		return nil
	}
	if log, err := os.OpenFile(n.logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644); err == nil {
		fmt.Fprintf(log, "=== harness: starting node %d at %s\n", n.ID, time.Now().Format(time.RFC3339Nano))
		log.Close()
	}
	p, err := startProcess(n.cluster.options.Binary, n.args, n.logPath, n.exited)
	if err != nil {
		return err
	}
	n.running, n.paused = p, false
	return nil
}

// exited notes an exit the harness did not ask for.
func (n *Node) exited(p *process) {
	n.mutex.Lock()
	expected := p.expected
	n.mutex.Unlock()
	if expected {
		return
	}
	c := n.cluster
	c.mutex.Lock()
	defer c.mutex.Unlock()
	c.unexpectedExits = append(c.unexpectedExits, NodeExit{
		Node: n.ID, At: time.Now(), Status: p.description(), LogTail: logTail(n.logPath, exitLogTailBytesMax),
	})
}

// Pid is the running process's id, 0 if none runs.
func (n *Node) Pid() int {
	n.mutex.Lock()
	defer n.mutex.Unlock()
	if n.running == nil || !n.running.alive() {
		return 0
	}
	return n.running.pid()
}

// Alive reports whether the node's process runs (paused counts).
func (n *Node) Alive() bool { return n.Pid() != 0 }

// Paused reports whether the node is stopped by SIGSTOP.
func (n *Node) Paused() bool {
	n.mutex.Lock()
	defer n.mutex.Unlock()
	return n.paused && n.running != nil && n.running.alive()
}

// Kill ends the node with SIGKILL, as a crash or power loss of the
// process would (the page cache survives), and waits until it is gone.
func (n *Node) Kill() error {
	p := n.ending()
	if p == nil {
		return nil
	}
	if err := p.signal(syscall.SIGKILL); err != nil {
		return fmt.Errorf("harness: killing node %d: %w", n.ID, err)
	}
	<-p.exited
	return nil
}

// Stop asks the node to shut down with SIGTERM (a controlled shutdown:
// its leaderships move first) and waits; after timeout it sends SIGKILL
// and reports an error.
func (n *Node) Stop(timeout time.Duration) error {
	p := n.ending()
	if p == nil {
		return nil
	}
	_ = p.signal(syscall.SIGCONT)
	if err := p.signal(syscall.SIGTERM); err != nil {
		return fmt.Errorf("harness: stopping node %d: %w", n.ID, err)
	}
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	select {
	case <-p.exited:
		if !p.state.Success() {
			return fmt.Errorf("harness: node %d exited uncleanly on SIGTERM: %s", n.ID, p.description())
		}
		return nil
	case <-timer.C:
		_ = p.signal(syscall.SIGKILL)
		<-p.exited
		return fmt.Errorf("harness: node %d ignored SIGTERM for %v and was killed", n.ID, timeout)
	}
}

// ending marks the running process as ending on purpose and returns it,
// or nil if none runs.
func (n *Node) ending() *process {
	n.mutex.Lock()
	defer n.mutex.Unlock()
	p := n.running
	if p == nil || !p.alive() {
		return nil
	}
	p.expected = true
	n.paused = false
	return p
}

// Pause stops the node with SIGSTOP: a long garbage-collection stall or
// a frozen VM. Its connections stay open and silent.
func (n *Node) Pause() error {
	n.mutex.Lock()
	defer n.mutex.Unlock()
	if n.running == nil || !n.running.alive() || n.paused {
		return nil
	}
	if err := n.running.signal(syscall.SIGSTOP); err != nil {
		return fmt.Errorf("harness: pausing node %d: %w", n.ID, err)
	}
	n.paused = true
	return nil
}

// Resume continues a paused node with SIGCONT.
func (n *Node) Resume() error {
	n.mutex.Lock()
	defer n.mutex.Unlock()
	if n.running == nil || !n.running.alive() || !n.paused {
		return nil
	}
	if err := n.running.signal(syscall.SIGCONT); err != nil {
		return fmt.Errorf("harness: resuming node %d: %w", n.ID, err)
	}
	n.paused = false
	return nil
}

// Advertised is the node's proxied client address.
func (n *Node) Advertised() string { return n.advertised }

// LogPath is the file the node's output goes to.
func (n *Node) LogPath() string { return n.logPath }

// LogTail is the last bytes of the node's log (at most that many), for a
// failure message that must outlive a test's directory.
func (n *Node) LogTail(bytes int64) string { return logTail(n.logPath, bytes) }
