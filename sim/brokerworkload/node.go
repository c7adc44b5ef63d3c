package brokerworkload

import (
	"fmt"
	"time"

	"sluice/core"
	"sluice/core/broker"
	"sluice/sim"
	"sluice/sim/simdisk"
)

// node is the one simulated Sluice broker: a machine that the nemesis
// crashes and restarts, and that halts itself after a failed fsync.
type node struct {
	run     *run
	machine *sim.Machine
	config  broker.Config
	broker  *broker.Broker
	up      bool

	// cancelRestart stops a scheduled restart; nil when none is pending.
	cancelRestart func() bool
	// startFailures counts consecutive failed starts.
	startFailures int
	// lastStartError is why the last start failed.
	lastStartError error

	crashes, halts, restarts int
}

const (
	nodeName    = "n1"
	nodePort    = 9092
	nodeAddress = "n1:9092"

	// startAttemptsMax bounds consecutive failed starts (a transient read
	// corruption during recovery is worth another try; a log that
	// cannot be opened three times in a row is not).
	startAttemptsMax = 3
	// startRetryDelay is the pause before starting again after a
	// failed start.
	startRetryDelay = 100 * time.Millisecond
)

func newNode(r *run, canaries *core.Canaries) *node {
	n := &node{run: r}
	n.config = broker.DefaultConfig()
	// One broker leads everything it hosts: nothing to rebalance, and
	// no timer to perturb the run.
	n.config.AutoLeaderRebalanceDisabled = true
	n.config.AdvertisedHost, n.config.AdvertisedPort = nodeName, nodePort
	n.config.DefaultPartitions = int32(r.settings.partitions)
	n.config.OffsetsTopicPartitions = r.settings.group.offsetsPartitions
	n.config.GroupMinSessionTimeout = groupSessionTimeoutMinBroker
	n.config.GroupInitialRebalanceDelay = r.settings.group.initialRebalanceDelay
	n.machine = sim.NewMachine(r.kernel, r.network, nodeName, sim.MachineOptions{
		Disk:     r.settings.disk,
		Codecs:   r.codecs,
		Buggify:  r.settings.buggify.New(r.kernel.Seed(), nodeName),
		Canaries: canaries,
		LogLevel: r.logLevel,
		OnHalt:   func(*sim.Machine, error) { n.halted() },
	})
	return n
}

// start builds the broker on the machine's current process and listens.
// A failed start leaves the machine crashed and tries again later, at most
// startAttemptsMax times in a row.
func (n *node) start() {
	if n.up {
		return
	}
	if !n.machine.Process.Alive() {
		n.machine.Restart()
	}
	b, err := broker.Start(n.machine.World(), n.config)
	if err == nil {
		err = n.machine.Net.Listen(nodeAddress, b)
	}
	if err != nil {
		n.startFailures++
		n.lastStartError = err
		n.run.note(fmt.Sprintf("broker start failed (%d in a row): %v", n.startFailures, err))
		n.machine.Crash()
		if n.startFailures < startAttemptsMax {
			n.scheduleRestart(startRetryDelay)
		}
		return
	}
	n.startFailures = 0
	n.broker, n.up = b, true
	n.run.record(sim.EventStart, "", []string{nodeName}, "start "+nodeName)
}

// crash kills the broker process now and restarts it after delay.
func (n *node) crash(delay time.Duration) {
	if !n.up {
		return
	}
	n.crashes++
	n.run.note("crash broker")
	n.run.record(sim.EventCrash, "", []string{nodeName}, "crash "+nodeName)
	n.machine.Crash()
	n.down()
	n.scheduleRestart(delay)
}

// halted is called after core halted the node (the machine already
// crashed): it restarts after a delay like any crash.
func (n *node) halted() {
	n.halts++
	n.run.record(sim.EventHalt, "", []string{nodeName}, nodeName+" halted")
	n.down()
	n.scheduleRestart(n.run.restartDelay())
}

func (n *node) down() {
	n.up = false
	n.broker = nil
}

func (n *node) scheduleRestart(delay time.Duration) {
	if n.cancelRestart != nil {
		n.cancelRestart()
	}
	n.cancelRestart = n.run.kernel.Schedule(int64(delay), nil, "workload.broker-restart", func() {
		n.cancelRestart = nil
		n.restarts++
		n.start()
	})
}

// heal brings the broker up now if it is down (liveness phase).
func (n *node) heal(benign simdisk.Faults) {
	n.machine.Disk.SetFaults(benign)
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
