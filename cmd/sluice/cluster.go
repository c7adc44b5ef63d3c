package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

func init() {
	register("cluster", "run a cluster on this machine, one child process per node (sluice cluster --nodes 3)", runCluster)
}

// Bounds of `sluice cluster`.
const (
	// clusterNodesMax bounds the nodes one command starts: every node is
	// a voter, and Raft quorums beyond a handful only get slower.
	clusterNodesMax = 9
	// portMax is the highest TCP port.
	portMax = 65535
	// escalationDelayMin is how long after the first signal a second one
	// kills the nodes. Tools such as timeout(1) signal both a process and
	// its group, so one stop can arrive twice at once; a person pressing
	// Ctrl-C again takes longer.
	escalationDelayMin = time.Second
)

// clusterNode is one child process.
type clusterNode struct {
	id               int
	listen           string
	controllerListen string
	dataDir          string
	cmd              *exec.Cmd
}

// runCluster starts nodes 1..N as `sluice broker` child processes: node i
// serves clients on port+i-1 and the other nodes on port+N+i-1 (client
// listeners first, then controller listeners), keeps its data in
// DIR/node-i, and writes its log to stderr with "[node i] " before each
// line. Every node is both broker and controller. The command prints the
// bootstrap address and each node's pid, forwards SIGINT and SIGTERM to
// every node still running (a second signal, a second or more later, kills
// them), and returns once all have exited. A node that dies on its own is
// reported and the others keep running, which is how a failover is tried
// by hand:
// `kill -9 <pid of the controller leader>`.
func runCluster(args []string) int {
	flags := flag.NewFlagSet("cluster", flag.ContinueOnError)
	count := flags.Int("nodes", 3, "number of nodes")
	port := flags.Int("port", 9092, "first client port; controller ports follow the client ports")
	host := flags.String("host", "127.0.0.1", "the host every node listens on and advertises")
	dataDir := flags.String("data", "./data/cluster", "data directory; node i keeps its data in DIR/node-i")
	logLevel := flags.String("log-level", "info", "the nodes' log level: debug, info, warn or error")
	profilePort := flags.Int("pprof-port", 0, "serve each node's Go profiles on host:port+i-1 for node i (see broker --pprof); 0: none")
	var overrides settings
	flags.Var(&overrides, "set", "a Kafka broker setting key=value for every node (repeatable)")
	if err := flags.Parse(args); err != nil {
		return 2
	}
	switch {
	case *count < 1 || *count > clusterNodesMax:
		fmt.Fprintf(os.Stderr, "sluice cluster: --nodes %d: between 1 and %d\n", *count, clusterNodesMax)
		return 2
	case *port < 1 || *port+2**count-1 > portMax:
		fmt.Fprintf(os.Stderr, "sluice cluster: --port %d: the %d ports from it must be valid TCP ports\n", *port, 2**count)
		return 2
	}
	executable, err := os.Executable()
	if err != nil {
		fmt.Fprintln(os.Stderr, "sluice cluster: cannot find this program to start the nodes:", err)
		return 1
	}

	nodes := make([]*clusterNode, *count)
	var voters, bootstrap []string
	for i := range nodes {
		id := i + 1
		nodes[i] = &clusterNode{
			id:               id,
			listen:           *host + ":" + strconv.Itoa(*port+i),
			controllerListen: *host + ":" + strconv.Itoa(*port+*count+i),
			dataDir:          filepath.Join(*dataDir, "node-"+strconv.Itoa(id)),
		}
		voters = append(voters, strconv.Itoa(id)+"@"+nodes[i].controllerListen)
		bootstrap = append(bootstrap, nodes[i].listen)
	}

	// Signals are caught before any child starts, so none is missed.
	signals := make(chan os.Signal, 2)
	signal.Notify(signals, syscall.SIGINT, syscall.SIGTERM)
	defer signal.Stop(signals)

	stderr := &lockedWriter{w: os.Stderr}
	exits := make(chan nodeExit, len(nodes))
	running := 0
	for _, n := range nodes {
		args := []string{"broker",
			"--node-id", strconv.Itoa(n.id),
			"--listen", n.listen,
			"--controller-listen", n.controllerListen,
			"--controllers", strings.Join(voters, ","),
			"--data", n.dataDir,
			"--log-level", *logLevel,
		}
		if *profilePort > 0 {
			args = append(args, "--pprof", *host+":"+strconv.Itoa(*profilePort+n.id-1))
		}
		for _, setting := range overrides {
			args = append(args, "--set", setting)
		}
		n.cmd = exec.Command(executable, args...)
		n.cmd.SysProcAttr = childProcessAttributes()
		n.cmd.Stdout = newPrefixWriter(stderr, n.id)
		n.cmd.Stderr = newPrefixWriter(stderr, n.id)
		if err := n.cmd.Start(); err != nil {
			fmt.Fprintf(os.Stderr, "sluice cluster: starting node %d: %v\n", n.id, err)
			stopAll(nodes, syscall.SIGTERM)
			waitAll(exits, running)
			return 1
		}
		running++
		go func(n *clusterNode) {
			err := n.cmd.Wait()
			exits <- nodeExit{node: n, err: err}
		}(n)
	}
	for _, n := range nodes {
		fmt.Printf("node %d: pid %d, clients %s, controller %s, data %s\n", n.id, n.cmd.Process.Pid, n.listen, n.controllerListen, n.dataDir)
	}
	fmt.Printf("bootstrap: %s\n", strings.Join(bootstrap, ","))

	stopping := false
	var stoppingSince time.Time
	failed := false
	for running > 0 {
		select {
		case sig := <-signals:
			if stopping {
				if time.Since(stoppingSince) >= escalationDelayMin {
					fmt.Fprintln(os.Stderr, "sluice cluster: second signal; killing the nodes")
					stopAll(nodes, syscall.SIGKILL)
				}
				continue
			}
			stopping, stoppingSince = true, time.Now()
			fmt.Fprintf(os.Stderr, "sluice cluster: %v; stopping %d node(s)\n", sig, running)
			stopAll(nodes, sig)
		case exit := <-exits:
			running--
			exit.node.cmd = nil
			switch {
			case exit.err == nil:
				fmt.Fprintf(os.Stderr, "sluice cluster: node %d stopped\n", exit.node.id)
			default:
				failed = failed || stopping
				fmt.Fprintf(os.Stderr, "sluice cluster: node %d exited: %v\n", exit.node.id, exit.err)
			}
		}
	}
	if failed {
		return 1
	}
	return 0
}

// nodeExit is a child process that has exited.
type nodeExit struct {
	node *clusterNode
	err  error
}

// stopAll sends sig to every node still running.
func stopAll(nodes []*clusterNode, sig os.Signal) {
	for _, n := range nodes {
		if n.cmd != nil && n.cmd.Process != nil {
			if err := n.cmd.Process.Signal(sig); err != nil && !errors.Is(err, os.ErrProcessDone) {
				fmt.Fprintf(os.Stderr, "sluice cluster: signalling node %d: %v\n", n.id, err)
			}
		}
	}
}

// waitAll waits for n exits.
func waitAll(exits <-chan nodeExit, n int) {
	for range n {
		<-exits
	}
}

// lockedWriter serializes whole lines from several nodes onto one stream.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) writeLine(line []byte) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.w.Write(line)
}

// prefixWriter copies what one node writes to a shared stream, line by
// line, each line prefixed with the node's id. exec copies a child's
// output into it from one goroutine per stream; pending holds a line not
// yet ended.
type prefixWriter struct {
	out     *lockedWriter
	prefix  []byte
	mu      sync.Mutex
	pending []byte
}

func newPrefixWriter(out *lockedWriter, id int) *prefixWriter {
	return &prefixWriter{out: out, prefix: []byte(fmt.Sprintf("[node %d] ", id))}
}

// prefixLineBytesMax bounds a buffered line; a longer one is written in
// pieces, each prefixed.
const prefixLineBytesMax = 64 << 10

func (p *prefixWriter) Write(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	written := len(b)
	for len(b) > 0 {
		end := bytes.IndexByte(b, '\n')
		if end < 0 {
			p.pending = append(p.pending, b...)
			if len(p.pending) >= prefixLineBytesMax {
				p.flush()
			}
			break
		}
		p.pending = append(p.pending, b[:end]...)
		p.flush()
		b = b[end+1:]
	}
	return written, nil
}

// flush writes the pending line.
func (p *prefixWriter) flush() {
	line := make([]byte, 0, len(p.prefix)+len(p.pending)+1)
	line = append(append(append(line, p.prefix...), p.pending...), '\n')
	p.out.writeLine(line)
	p.pending = p.pending[:0]
}
