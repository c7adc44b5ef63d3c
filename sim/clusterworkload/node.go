package clusterworkload

import (
	"fmt"
	"log/slog"
	"time"

	"sluice/core"
	"sluice/core/broker"
	"sluice/sim"
	"sluice/sim/kernel"
	"sluice/sim/scenario"
)

// node is one machine of the cluster running a Sluice broker with both
// roles (broker and metadata quorum voter). The nemesis crashes, pauses
// and restarts it; it halts itself after a failed fsync and is restarted
// after Timeouts.Restart.
type node struct {
	run     *run
	id      int
	name    string
	machine *sim.Machine
	config  broker.Config
	broker  *broker.Broker
	up      bool

	// cancelRestart stops a scheduled restart; nil when none is pending.
	cancelRestart func() bool
	// startFailures counts consecutive failed starts; lastStartError is
	// why the last one failed.
	startFailures  int
	lastStartError error

	crashes, halts, restarts int
	// shutdowns counts the controlled shutdowns that stopped the node;
	// shuttingDown is set while one runs.
	shutdowns    int
	shuttingDown bool
	// everReady is set once the broker has first been ready (registered
	// and unfenced), and stays set across restarts: the controller keeps
	// a registration for good.
	everReady bool
}

const (
	clientPort     = 9092
	controllerPort = 9093
	// startAttemptsMax bounds consecutive failed starts: a transient
	// read corruption during recovery is worth another try, a data
	// directory that cannot be opened five times in a row is not.
	startAttemptsMax = 5
	// startRetryDelay is the pause before starting again after a failed
	// start.
	startRetryDelay = 100 * time.Millisecond
	// Group coordinator bounds: sessions as short as the scenario's.
	groupSessionTimeoutMinBroker = 100 * time.Millisecond
)

// traceLogLevel is what core's logs put in the trace by default: warnings
// and worse. Info lines would double a run's cost (the observer sees the
// info lines it needs regardless); RunOptions.LogLevel lowers it to follow
// one seed, which changes the trace hash.
const traceLogLevel = slog.LevelWarn

func clientAddress(id int) string {
	if id >= 0 && id < len(clientAddresses) {
		return clientAddresses[id]
	}
	return nodeAddress(id, clientPort)
}

func controllerAddress(id int) string {
	if id >= 0 && id < len(controllerAddresses) {
		return controllerAddresses[id]
	}
	return nodeAddress(id, controllerPort)
}

func nodeAddress(id, port int) string { return fmt.Sprintf("%s:%d", scenario.NodeName(id), port) }

// addressesMade is how many node ids' addresses are made once, more than
// a scenario has nodes: the workload asks for an address on every admin
// request. A larger id's is formatted each time.
const addressesMade = 8

var clientAddresses, controllerAddresses = nodeAddresses(clientPort), nodeAddresses(controllerPort)

// nodeAddresses are the addresses at port of node ids 0 to addressesMade-1.
func nodeAddresses(port int) (addresses [addressesMade]string) {
	for id := range addresses {
		addresses[id] = nodeAddress(id, port)
	}
	return addresses
}

func newNode(r *run, id int, canaries *core.Canaries) *node {
	s := r.scenario
	n := &node{run: r, id: id, name: scenario.NodeName(id)}
	n.config = brokerConfig(s, id)
	var buggify *core.Buggify
	if s.Buggify.Enable > 0 && s.Buggify.Fire > 0 {
		buggify = core.NewBuggify(kernel.NewRand(s.Seed, "buggify/"+n.name), s.Buggify.Enable, s.Buggify.Fire)
	}
	n.machine = sim.NewMachine(r.kernel, r.network, n.name, sim.MachineOptions{
		Disk:     r.baseDisk(),
		Codecs:   r.codecs,
		Canaries: canaries,
		Buggify:  buggify,
		LogLevel: r.logLevel,
		OnHalt:   func(_ *sim.Machine, reason error) { n.halted(reason) },
	})
	n.machine.Clock.SetRate(s.ClockRates[id-1])
	return n
}

// brokerConfig is node id's configuration: the scenario's timeouts, every
// node a voter.
func brokerConfig(s scenario.Scenario, id int) broker.Config {
	t := s.Timeouts
	voters := map[int32]string{}
	for i := 1; i <= s.Cluster.Nodes; i++ {
		voters[int32(i)] = controllerAddress(i)
	}
	c := broker.DefaultConfig()
	c.NodeID = int32(id)
	c.AdvertisedHost, c.AdvertisedPort = scenario.NodeName(id), clientPort
	c.Voters = voters
	c.ControllerAddress = voters[int32(id)]
	c.AutoCreateTopics = false
	c.DefaultReplicationFactor = int16(min(3, s.Cluster.Nodes))
	c.OffsetsTopicPartitions = int32(s.Cluster.OffsetsPartitions)
	if s.Logs.OffsetsSegmentBytes != 0 {
		c.OffsetsTopicSegmentBytes = int64(s.Logs.OffsetsSegmentBytes)
	}
	if s.Logs.RetentionCheck != 0 {
		c.RetentionCheckInterval = s.Logs.RetentionCheck
	}
	if s.Cluster.MetadataSnapshotEvery != 0 {
		c.SnapshotEveryRecords = s.Cluster.MetadataSnapshotEvery
	}
	c.LeaderImbalanceCheckInterval = s.Cluster.LeaderRebalanceEvery
	c.AutoLeaderRebalanceDisabled = s.Cluster.LeaderRebalanceEvery == 0
	c.OffsetsTopicReplicationFactor = int16(min(3, s.Cluster.Nodes))
	c.GroupMinSessionTimeout = groupSessionTimeoutMinBroker
	c.GroupInitialRebalanceDelay = t.GroupInitialDelay
	c.SessionTimeout = t.BrokerSession
	c.HeartbeatInterval = t.BrokerHeartbeat
	c.ElectionTimeout = t.Election
	c.FetchTimeout = t.QuorumFetch
	c.QuorumRequestTimeout = t.QuorumFetch / 2
	// A registration or heartbeat stuck behind a cut gives up within a
	// session, as the controller would fence the broker by then anyway.
	c.ControllerRequestTimeout = t.BrokerSession
	c.ReplicaLagTimeMax = t.ReplicaLag
	c.ReplicaFetchWaitMax = t.ReplicaFetchWait
	return c
}

// world is the machine's world with the observer watching the lines core
// logs on Events (the rest of its log goes to the trace unwatched).
func (n *node) world() core.World {
	w := n.machine.World()
	w.Events = slog.New(&watchingHandler{inner: w.Log.Handler(), observer: n.run.observer, node: n.id})
	w.Clock = punctualClock{w.Clock}
	return w
}

// punctualClock keeps a drifting machine clock's timers from firing early.
// sim.Clock.AfterFunc turns a delay into virtual time by dividing by the
// clock's rate and rounding down, so on a clock that runs fast a timer can
// fire a nanosecond before its delay has elapsed on the node's own clock,
// and a delay of a nanosecond becomes none at all. Code that sleeps until a
// deadline on Elapsed (core/broker's replica fetcher does) then wakes,
// finds the deadline a nanosecond away and sleeps again at the same
// instant, forever. Adding more than the rate's worth of nanoseconds makes
// every timer fire at or after its delay; it is a few nanoseconds late at
// most. (Reported: sim.Clock.AfterFunc should round up.)
type punctualClock struct{ core.Clock }

// timerRoundingMargin covers clock rates up to 15.
const timerRoundingMargin = 16 * time.Nanosecond

func (c punctualClock) AfterFunc(d time.Duration, f func()) core.Timer {
	if d > 0 {
		d += timerRoundingMargin
	}
	return c.Clock.AfterFunc(d, f)
}

// start builds the broker on the machine's current process. The
// controller listener opens at once; the client listener once the broker
// is registered and unfenced, as a KRaft broker starts serving clients
// only once it has caught up. A failed start leaves the machine crashed
// and tries again a little later, at most startAttemptsMax times in a row.
func (n *node) start() {
	if n.up {
		return
	}
	if !n.machine.Process.Alive() {
		n.machine.Restart()
	}
	b, err := broker.Start(n.world(), n.config)
	if err == nil {
		err = n.machine.Net.Listen(controllerAddress(n.id), b.ControllerAcceptor())
	}
	if err != nil {
		n.startFailures++
		n.lastStartError = err
		n.run.note(fmt.Sprintf("%s start failed (%d in a row): %v", n.name, n.startFailures, err))
		n.machine.Crash()
		if n.startFailures < startAttemptsMax {
			n.scheduleRestart(startRetryDelay)
		}
		return
	}
	n.startFailures = 0
	n.broker, n.up = b, true
	if n.run.recording != nil { // spares a sweep the strings
		n.run.record(sim.EventStart, "", []string{n.name}, "start "+n.name)
	}
	incarnation := n.machine.Process.Incarnation()
	b.WhenReady(func() {
		if n.machine.Process.Incarnation() != incarnation || !n.up {
			return
		}
		n.everReady = true
		if err := n.machine.Net.Listen(clientAddress(n.id), b); err != nil {
			panic(fmt.Sprintf("clusterworkload: %s cannot open its client listener: %v", n.name, err))
		}
	})
}

// crash kills the machine now; it restarts after delay, or stays down
// (until the liveness phase) when delay is negative.
func (n *node) crash(delay time.Duration) {
	if !n.up {
		return
	}
	n.crashes++
	n.run.note("crash " + n.name)
	if n.run.recording != nil {
		n.run.record(sim.EventCrash, "", []string{n.name}, "crash "+n.name)
	}
	n.machine.Crash()
	n.down()
	if delay >= 0 {
		n.scheduleRestart(delay)
	}
}

// shutdown stops the node gracefully (broker.Shutdown: a controlled
// shutdown, then every log synced and closed); once it has stopped, its
// machine's process exits and stopped runs. It reports false if the node
// is already on its way down.
func (n *node) shutdown(stopped func()) bool {
	if !n.up || n.shuttingDown {
		return false
	}
	n.shuttingDown = true
	n.run.note("shutdown " + n.name)
	if n.run.recording != nil {
		n.run.record(sim.EventFault, "", []string{n.name}, "controlled shutdown of "+n.name)
	}
	incarnation := n.machine.Process.Incarnation()
	n.broker.Shutdown(func() {
		if n.machine.Process.Incarnation() != incarnation || !n.up {
			return // crashed meanwhile
		}
		n.run.note(n.name + " stopped")
		if n.run.recording != nil {
			n.run.record(sim.EventCrash, "", []string{n.name}, n.name+" stopped")
		}
		n.shutdowns++
		n.machine.Crash() // the process exits; everything was synced
		n.down()
		stopped()
	})
	return true
}

// halted follows core halting the node (the machine already crashed).
func (n *node) halted(reason error) {
	n.halts++
	if n.run.recording != nil {
		n.run.record(sim.EventHalt, "", []string{n.name}, fmt.Sprintf("%s halted: %v", n.name, reason))
	}
	n.down()
	n.run.nemesis.nodeHalted(n)
	n.scheduleRestart(n.run.scenario.Timeouts.Restart)
}

func (n *node) down() {
	n.up = false
	n.shuttingDown = false
	n.broker = nil
	if n.cancelRestart != nil {
		n.cancelRestart()
		n.cancelRestart = nil
	}
}

func (n *node) scheduleRestart(delay time.Duration) {
	if n.cancelRestart != nil {
		n.cancelRestart()
	}
	n.cancelRestart = n.run.kernel.Schedule(int64(delay), nil, "workload.restart-"+n.name, func() {
		n.cancelRestart = nil
		n.restarts++
		n.start()
	})
}

// heal brings the node up now if it is down (the liveness phase).
func (n *node) heal() {
	if n.up {
		return
	}
	if n.cancelRestart != nil {
		n.cancelRestart()
		n.cancelRestart = nil
	}
	n.startFailures = 0
	n.start()
}

// describe says where the node is, for a liveness failure.
func (n *node) describe() string {
	switch {
	case n.up && n.machine.Process.Suspended():
		return n.name + "=paused"
	case n.up:
		return n.name + "=up"
	case n.lastStartError != nil:
		return fmt.Sprintf("%s=down(%v)", n.name, n.lastStartError)
	}
	return n.name + "=down"
}
