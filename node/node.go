package node

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"time"

	"sluice/core"
	"sluice/core/broker"
	"sluice/disk"
	sluicenet "sluice/net"
	"sluice/node/codecs"
	"sluice/node/loop"
)

// haltExitStatus is the exit status after core halts the node (a failed
// fsync, for one): a supervisor should restart it, and recovery will find
// what the disk really holds.
const haltExitStatus = 70

// Node is a running production node.
type Node struct {
	config Config
	log    *slog.Logger
	loop   *loop.Loop
	fs     *disk.FS
	dialer *sluicenet.Dialer
	// listener serves clients (nil on a controller-only node);
	// controllerListener serves the other nodes (nil on a single node
	// without --controller-listen, and on a broker-only node).
	listener           *sluicenet.Listener
	controllerListener *sluicenet.Listener
	broker             *broker.Broker
	loopDone           chan struct{}
}

// Start opens the data directory, recovers the broker on its loop and
// starts listening: the controller listener first (the other nodes need it
// to elect a quorum leader), then the client listener. It returns once
// clients can connect.
func Start(config Config, log *slog.Logger) (*Node, error) {
	if err := config.resolve(); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(config.DataDir, 0o755); err != nil {
		return nil, fmt.Errorf("data directory: %w", err)
	}
	n := &Node{config: config, log: log, loop: loop.New(config.InboxMax), loopDone: make(chan struct{})}
	fs, err := disk.New(config.DataDir, func(f func()) { n.loop.Post(f) })
	if err != nil {
		return nil, err
	}
	n.fs = fs
	n.dialer = sluicenet.NewDialer(n.loop.Post, config.Net, log)
	world := core.World{
		Clock:   loop.NewClock(n.loop),
		FS:      fs,
		Net:     n.dialer,
		Entropy: loop.NewEntropy(),
		Log:     log,
		// Compaction, the key check of compacted topics and lookups by
		// timestamp look inside compressed batches with them.
		Codecs: codecs.New(),
		Halt: func(reason error) {
			// A crash, on purpose: nothing more may reach the disk or
			// the network from a node in this state.
			log.Error("halting: the node cannot go on safely and will recover at restart", "reason", reason)
			os.Exit(haltExitStatus)
		},
	}
	go func() {
		defer close(n.loopDone)
		n.loop.Run()
	}()

	started := make(chan error, 1)
	n.loop.Post(func() {
		b, err := broker.Start(world, config.Broker)
		n.broker = b
		started <- err
	})
	if err := <-started; err != nil {
		n.stopLoop()
		return nil, err
	}
	if config.Broker.Roles.Controller && config.ControllerListen != "" {
		listener, err := sluicenet.Listen(config.ControllerListen, n.broker.ControllerAcceptor(), n.loop.Post, config.Net, log)
		if err != nil {
			n.shutdownBroker()
			n.stopLoop()
			return nil, fmt.Errorf("controller listener: %w", err)
		}
		n.controllerListener = listener
		log.Info("controller listening", "address", listener.Addr(), "voters", len(config.Broker.Voters))
	}
	if config.Broker.Roles.Broker {
		n.awaitReady()
		listener, err := sluicenet.Listen(config.Listen, n.broker, n.loop.Post, config.Net, log)
		if err != nil {
			n.closeControllerListener()
			n.shutdownBroker()
			n.stopLoop()
			return nil, err
		}
		n.listener = listener
		log.Info("listening", "address", listener.Addr(), "advertised", config.Advertised, "data", config.DataDir)
	}
	return n, nil
}

// readyWaitMax bounds how long Start waits for the broker to be registered
// and unfenced before opening the client listener anyway: a node started
// before a majority of the controllers is up serves clients (Metadata,
// with what it knows) rather than refusing connections.
const readyWaitMax = 30 * time.Second

// awaitReady waits until the broker is registered and unfenced, or
// readyWaitMax.
func (n *Node) awaitReady() {
	ready := make(chan struct{})
	if !n.loop.Post(func() { n.broker.WhenReady(func() { close(ready) }) }) {
		return
	}
	select {
	case <-ready:
	case <-time.After(readyWaitMax):
		n.log.Warn("the broker is not registered and unfenced yet; serving clients anyway", "waited", readyWaitMax)
	}
}

// Addr is the address the node listens on for clients ("" on a
// controller-only node).
func (n *Node) Addr() string {
	if n.listener == nil {
		return ""
	}
	return n.listener.Addr()
}

// ControllerAddr is the controller listener's address, "" without one.
func (n *Node) ControllerAddr() string {
	if n.controllerListener == nil {
		return ""
	}
	return n.controllerListener.Addr()
}

// Stop shuts the node down gracefully: the broker's controlled shutdown
// (its leaderships move to other brokers while it still serves), then it
// syncs and closes every log and hands over the quorum's leadership; then
// the listeners, the loop and the disk stop.
func (n *Node) Stop() {
	n.shutdownBroker()
	if n.listener != nil {
		n.listener.Close()
	}
	n.closeControllerListener()
	n.stopLoop()
	n.log.Info("stopped")
}

func (n *Node) closeControllerListener() {
	if n.controllerListener != nil {
		n.controllerListener.Close()
	}
}

func (n *Node) shutdownBroker() {
	done := make(chan struct{})
	if !n.loop.Post(func() { n.broker.Shutdown(func() { close(done) }) }) {
		return
	}
	<-done
}

func (n *Node) stopLoop() {
	n.loop.Stop()
	<-n.loopDone
	n.dialer.Close()
	n.fs.Close()
}

// Run starts a node and runs it until ctx is cancelled (SIGTERM), then
// stops it gracefully.
func Run(ctx context.Context, config Config, log *slog.Logger) error {
	n, err := Start(config, log)
	if err != nil {
		return err
	}
	<-ctx.Done()
	n.Stop()
	if cause := context.Cause(ctx); cause != nil && !errors.Is(cause, context.Canceled) {
		return cause
	}
	return nil
}
