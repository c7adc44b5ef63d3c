package quorumworkload

import (
	"fmt"
	"time"

	"sluice/core"
	"sluice/core/peer"
	"sluice/core/quorum"
	"sluice/sim"
	"sluice/sim/kernel"
	"sluice/sim/simdisk"
)

// node is one quorum member on its own machine. The nemesis crashes and
// restarts it; it halts itself after a failed fsync.
type node struct {
	run     *run
	id      int32
	name    string
	voter   bool
	machine *sim.Machine
	quorum  *quorum.Quorum
	state   *stateMachine
	up      bool
	// lifetimes counts the processes started on the machine.
	lifetimes int

	// cancelRestart stops a scheduled restart; nil when none is pending.
	cancelRestart func() bool
	// startFailures counts consecutive failed starts.
	startFailures  int
	lastStartError error

	crashes, halts int
}

const (
	metadataDir = "__cluster_metadata-0"

	// startAttemptsMax bounds consecutive failed starts (a transient
	// read error during recovery is worth another try).
	startAttemptsMax = 5
	// startRetryDelay is the pause before starting again after a
	// failed start.
	startRetryDelay = 100 * time.Millisecond
)

func nodeName(id int32) string    { return fmt.Sprintf("n%d", id) }
func nodeAddress(id int32) string { return fmt.Sprintf("n%d:9093", id) }

func newNode(r *run, id int32, voter bool, canaries *core.Canaries) *node {
	n := &node{run: r, id: id, name: nodeName(id), voter: voter}
	n.machine = sim.NewMachine(r.kernel, r.network, n.name, sim.MachineOptions{
		Disk:     r.settings.disk,
		Canaries: canaries,
		LogLevel: r.logLevel,
		Buggify:  core.NewBuggify(kernel.NewRand(r.kernel.Seed(), "buggify/"+nodeName(id)), buggifyEnableChance, buggifyFireChance),
		OnHalt:   func(*sim.Machine, error) { n.halted() },
	})
	n.machine.Clock.SetRate(r.settings.clockRates[id-1])
	return n
}

// BUGGIFY in this workload: each site is on for a quarter of the runs and
// then fires a quarter of the times it is reached.
const (
	buggifyEnableChance = 0.25
	buggifyFireChance   = 0.25
)

// start opens the node's quorum on the machine's current process and
// listens. A failed start leaves the machine crashed and tries again later,
// at most startAttemptsMax times in a row.
func (n *node) start() {
	if n.up {
		return
	}
	r := n.run
	if !n.machine.Process.Alive() {
		n.machine.Restart()
		// A process started during a pause is not the one paused: it
		// runs at the node's own rate (see pause in nemesis.go), or its
		// first timeouts would come twenty times late.
		n.machine.Clock.SetRate(r.settings.clockRates[n.id-1])
	}
	n.lifetimes++
	w := n.machine.World()
	peers := peer.New(w, fmt.Sprintf("controller-%d", n.id))
	state := newStateMachine(r, n.id, n.lifetimes)
	r.states = append(r.states, state)
	s := r.settings
	q, err := quorum.Open(w, metadataDir, quorum.Config{
		NodeID:               n.id,
		Voters:               r.voterAddresses,
		ElectionTimeout:      s.electionTimeout,
		FetchTimeout:         s.fetchTimeout,
		RequestTimeout:       s.requestTimeout,
		SnapshotEveryRecords: s.snapshotEvery,
	}, peers, state, state.apply)
	if err == nil {
		err = n.machine.Net.Listen(nodeAddress(n.id), &listener{quorum: q, answered: n.voteAnswered})
	}
	if err != nil {
		n.startFailures++
		n.lastStartError = err
		r.note(fmt.Sprintf("%s start failed (%d in a row): %v", n.name, n.startFailures, err))
		n.machine.Crash()
		if n.startFailures < startAttemptsMax {
			n.scheduleRestart(startRetryDelay)
		}
		return
	}
	id := n.id
	q.OnLeaderChange(func(leaderID, epoch int32) {
		if leaderID == id {
			r.recordLeader(epoch, id)
			r.checker.leading(epoch, id)
		}
	})
	n.startFailures = 0
	n.quorum, n.state, n.up = q, state, true
	r.record(sim.EventStart, "", []string{n.name}, "start "+n.name)
}

// crash kills the node's process now and restarts it after delay.
func (n *node) crash(delay time.Duration) {
	if !n.up {
		return
	}
	n.crashes++
	n.run.note("crash " + n.name)
	n.run.record(sim.EventCrash, "", []string{n.name}, "crash "+n.name)
	n.machine.Crash()
	n.down()
	n.scheduleRestart(delay)
}

// halted is called after core halted the node (the machine already
// crashed).
func (n *node) halted() {
	n.halts++
	n.run.record(sim.EventHalt, "", []string{n.name}, n.name+" halted")
	n.down()
	n.scheduleRestart(n.run.restartDelay())
}

func (n *node) down() {
	n.up = false
	n.quorum = nil
}

func (n *node) scheduleRestart(delay time.Duration) {
	if n.cancelRestart != nil {
		n.cancelRestart()
	}
	n.cancelRestart = n.run.kernel.Schedule(int64(delay), nil, "workload.restart-"+n.name, func() {
		n.cancelRestart = nil
		n.start()
	})
}

// heal brings the node up now if it is down, on a good disk.
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
