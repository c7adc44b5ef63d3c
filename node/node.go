package node

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"

	"sluice/core"
	"sluice/core/broker"
	"sluice/disk"
	sluicenet "sluice/net"
	"sluice/node/loop"
)

// haltExitStatus is the exit status after core halts the node (a failed
// fsync, for one): a supervisor should restart it, and recovery will find
// what the disk really holds.
const haltExitStatus = 70

// Node is a running production node.
type Node struct {
	config   Config
	log      *slog.Logger
	loop     *loop.Loop
	fs       *disk.FS
	dialer   *sluicenet.Dialer
	listener *sluicenet.Listener
	broker   *broker.Broker
	loopDone chan struct{}
}

// Start opens the data directory, recovers the broker on its loop and
// starts listening. It returns once clients can connect.
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
	listener, err := sluicenet.Listen(config.Listen, n.broker, n.loop.Post, config.Net, log)
	if err != nil {
		n.shutdownBroker()
		n.stopLoop()
		return nil, err
	}
	n.listener = listener
	log.Info("listening", "address", listener.Addr(), "advertised", config.Advertised, "data", config.DataDir)
	return n, nil
}

// Addr is the address the node listens on.
func (n *Node) Addr() string { return n.listener.Addr() }

// Stop shuts the node down gracefully: no new connections, the broker
// syncs and closes every log, then the loop and the disk stop.
func (n *Node) Stop() {
	n.listener.Close()
	n.shutdownBroker()
	n.stopLoop()
	n.log.Info("stopped")
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
