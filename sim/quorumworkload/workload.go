package quorumworkload

import (
	"fmt"
	"log/slog"
	"slices"
	"time"

	"sluice/core"
	"sluice/core/quorum"
	"sluice/sim"
	"sluice/sim/kernel"
	"sluice/sim/simnet"
)

// Name is the workload's name on the command line.
const Name = "quorum"

// Bounds of the phases after the faults, in virtual time. A healed cluster
// elects a leader within a few election timeouts plus the peer client's
// reconnect backoff (at most 2 s after a long outage); livenessMax leaves
// room for that, for a pre-vote round lost to a tie, and for a lagging
// node's snapshot download.
const (
	livenessMax = 15 * time.Second
	// livenessProposals is how many records must commit after the heal.
	livenessProposals = 3
	// retryDelay is the driver's pause before retrying a liveness
	// proposal that found no leader or lost it.
	retryDelay = 50 * time.Millisecond
	// proposalPatience is how long the driver waits for a liveness
	// proposal before it makes another.
	proposalPatience = time.Second
)

// New returns the quorum workload.
func New() sim.Workload { return workload{} }

type workload struct{}

func (workload) Name() string { return Name }

// reportPanics turns a panic (an assertion in core, a bug here) into a
// failed check, so a sweep reports the seed instead of dying. Tests switch
// it off to see the stack.
var reportPanics = true

// run is one seed's simulation.
type run struct {
	kernel      *kernel.Kernel
	logLevel    slog.Level // what core logs to the trace
	rng         random     // the driver's choices
	nemesisRand random     // the nemesis's choices
	settings    settings
	network     *simnet.Network
	nodes       []*node
	// voterAddresses is the quorum's voter set, shared by every node.
	voterAddresses map[int32]string
	checker        *checker
	// states are every node process's state machine, in creation order.
	states []*stateMachine

	nextValue     int
	stopProposing bool
	faultsStopped bool
	networkFault  bool

	// violation is the first check that failed.
	violation *violation
	counts    counts
	// crashAfterVote is the seed's draw of the crash after a vote.
	crashAfterVote crashAfterVote
	// slowLinks is the seed's draw of slow links (slow_net.go).
	slowLinks sim.SlowLinks
	// coverage counts the faults applied (see coverage.go).
	coverage *sim.Coverage
	// recording is kept when the options ask for one (record.go).
	recording *sim.Recording
}

type violation struct{ check, detail string }

type counts struct {
	proposed, acknowledged, failed, noLeader, leaders                          int
	crashes, powerLosses, pauses, partitions, clockJumps, fullDisks, slowDisks int
	crashesAfterVote, slowLinks                                                int
	// leaderWaitMax is the longest wait for a leader after a heal or the
	// final power cycle.
	leaderWaitMax time.Duration
}

// Run simulates one seed: a pure function of its arguments.
func (workload) Run(seed uint64, options sim.RunOptions) sim.Result {
	result, _ := runSeed(seed, options, nil)
	return result
}

// runSeed is Run, with a hook for tests to adjust the drawn settings.
func runSeed(seed uint64, options sim.RunOptions, adjust func(*settings)) (result sim.Result, r *run) {
	trace := kernel.NewTrace(options.Trace)
	k := kernel.NewKernel(seed, trace)
	r = &run{
		kernel:      k,
		logLevel:    options.LogLevelOr(slog.LevelInfo),
		rng:         kernel.NewRand(seed, "workload"),
		nemesisRand: kernel.NewRand(seed, "nemesis"),
		coverage:    newCoverage(),
	}
	r.settings = drawSettings(kernel.NewRand(seed, "settings"))
	r.crashAfterVote = drawCrashAfterVote(seed)
	r.slowLinks = sim.DrawSlowLinks(seed)
	if slices.Contains(options.Canaries, quorum.CanaryVoteBeforeDurable) {
		// Lean toward what exposes it (the seed is still what is
		// measured): voters crashed after their votes and back soon,
		// while network faults keep a second candidate from hearing of
		// the first one's epoch.
		r.crashAfterVote.chance = max(r.crashAfterVote.chance, crashAfterVoteChanceMax)
		r.settings.partitionMean = partitionMeanDrawMin
		r.settings.restartMax = min(r.settings.restartMax, 100*time.Millisecond)
		r.settings.faultWindowMax = faultWindowDrawMax
	}
	if adjust != nil {
		adjust(&r.settings)
	}
	r.checker = newChecker(r)
	r.recording = newRecording(r, options)
	result = sim.Result{Seed: seed, Options: append(r.settings.options(), sim.Opt("crash_after_vote", roundChance(r.crashAfterVote.chance)), sim.Opt("slow_net_every", meanText(r.slowLinks.Mean))), Recording: r.recording}
	defer func() {
		if reportPanics {
			if recovered := recover(); recovered != nil {
				result.Check, result.Detail = "panic", fmt.Sprint(recovered)
			}
		}
		result.TraceHash = trace.Hash()
		result.SimTime = time.Duration(k.Now())
		result.Steps = k.Steps()
		result.Stats = r.stats()
		result.Coverage = r.finishCoverage()
	}()
	r.simulate(core.NewCanaries(options.Canaries...))
	if r.violation != nil {
		result.Check, result.Detail = r.violation.check, r.violation.detail
	}
	return result, r
}

// fail records the first violation; the run stops at the next check.
func (r *run) fail(check, detail string) {
	if r.violation == nil {
		r.violation = &violation{check, detail}
		r.note("violation: " + check + ": " + detail)
		r.record(sim.EventViolation, check, nil, check+": "+detail)
	}
}

func (r *run) note(text string) { r.kernel.Trace().Note(r.kernel.Now(), "workload", text) }

// runWhile runs the simulation while cond holds, until limit; it stops
// early at a violation. It reports whether cond became false.
func (r *run) runWhile(limit int64, cond func() bool) bool {
	return r.kernel.RunWhile(limit, func() bool { return r.violation == nil && cond() })
}

func (r *run) simulate(canaries *core.Canaries) {
	s := r.settings
	r.network = simnet.New(r.kernel, kernel.NewRand(r.kernel.Seed(), "network"), s.network)
	r.voterAddresses = map[int32]string{}
	for id := int32(1); id <= int32(s.voters); id++ {
		r.voterAddresses[id] = nodeAddress(id)
	}
	for id := int32(1); id <= int32(s.voters+s.observers); id++ {
		r.nodes = append(r.nodes, newNode(r, id, id <= int32(s.voters), canaries))
	}
	for _, n := range r.nodes {
		n.start()
	}

	// Safety: traffic and faults.
	r.recording.StartPhase(r.now(), "safety")
	r.startDriver()
	r.startNemesis()
	r.startSlowLinks()
	r.runWhile(r.kernel.Now()+int64(s.safety), func() bool { return true })
	r.stopProposing = true
	if r.violation != nil {
		return
	}

	// Liveness: heal, then a leader, new commits, and every node caught up.
	r.note("liveness phase")
	r.recording.StartPhase(r.now(), "liveness")
	r.heal()
	if !r.converge("liveness") {
		return
	}

	// The final power cycle: every node crashes at once and restarts.
	r.note("final power cycle")
	r.powerCycle()
	if !r.converge("after the final power cycle") || r.violation != nil {
		return
	}
	r.checker.checkStates()
	r.checker.checkDurable()
}

// converge waits, within livenessMax, for a leader, then for
// livenessProposals new records to commit, then for every node to have
// applied everything the leader committed. It reports whether all of that
// happened (a violation found meanwhile is reported by the caller).
func (r *run) converge(phase string) bool {
	start := r.kernel.Now()
	deadline := start + int64(livenessMax)
	leaderBound := r.leaderBound()
	if !r.runWhile(start+int64(leaderBound), func() bool { return r.leader() == nil }) {
		if r.violation == nil {
			r.fail("liveness", fmt.Sprintf("no leader within %v %s: %s", leaderBound, phase, r.describeNodes()))
		}
		return false
	}
	r.counts.leaderWaitMax = max(r.counts.leaderWaitMax, time.Duration(r.kernel.Now()-start))
	// One proposal at a time. One whose leader crashes never hears back
	// (its process is gone, as a real controller's would be), so a
	// proposal not settled within proposalPatience is given up on and the
	// next one made; a late success still counts.
	committed := 0
	var proposeNext func()
	proposeNext = func() {
		if committed >= livenessProposals {
			return
		}
		settled := false
		settle := func(ok bool) {
			if settled {
				if ok {
					committed++
				}
				return
			}
			settled = true
			if ok {
				committed++
				proposeNext()
				return
			}
			r.kernel.Schedule(int64(retryDelay), nil, "workload.retry", proposeNext)
		}
		if !r.propose(1, settle) {
			settle(false)
			return
		}
		r.kernel.Schedule(int64(proposalPatience), nil, "workload.give-up", func() {
			if !settled {
				settle(false)
			}
		})
	}
	proposeNext()
	if !r.runWhile(deadline, func() bool { return committed < livenessProposals }) {
		if r.violation == nil {
			r.fail("liveness", fmt.Sprintf("%d of %d proposals committed within %v %s: %s", committed, livenessProposals, livenessMax, phase, r.describeNodes()))
		}
		return false
	}
	if !r.runWhile(deadline, func() bool { return !r.caughtUp() }) {
		if r.violation == nil {
			r.fail("liveness", fmt.Sprintf("nodes not caught up within %v %s: %s", livenessMax, phase, r.describeNodes()))
		}
		return false
	}
	r.checker.checkStates()
	return r.violation == nil
}

// leaderBound is how soon after the heal (or the final power cycle) a
// leader must lead: every node restarts within restartMax, and each
// reconnects to the others within the peer client's largest reconnect
// backoff (2 s); after that an election takes an election timeout (up to
// 2T) plus a pre-vote and a vote round, and a tie costs another timeout.
// Ten election timeouts leave room for a few ties; a follower that still
// hears nobody waits a fetch timeout before it campaigns.
func (r *run) leaderBound() time.Duration {
	s := r.settings
	return s.restartMax + peerReconnectBackoffMax + s.fetchTimeout + 10*s.electionTimeout
}

// peerReconnectBackoffMax is core/peer's reconnectBackoffMax.
const peerReconnectBackoffMax = 2 * time.Second

// caughtUp reports whether every node is up and has applied everything the
// leader has committed.
func (r *run) caughtUp() bool {
	leader := r.leader()
	if leader == nil {
		return false
	}
	hw := leader.quorum.HighWatermark()
	for _, n := range r.nodes {
		if !n.up || n.quorum.AppliedOffset() != hw {
			return false
		}
	}
	return true
}

// describeNodes says where each node is, for a liveness failure.
func (r *run) describeNodes() string {
	text := ""
	for _, n := range r.nodes {
		if !n.up {
			text += fmt.Sprintf(" %s=down(%v)", n.name, n.lastStartError)
			continue
		}
		leader, epoch, _ := n.quorum.Leader()
		text += fmt.Sprintf(" %s=epoch%d/leader%d/hw%d/applied%d", n.name, epoch, leader, n.quorum.HighWatermark(), n.quorum.AppliedOffset())
	}
	return text
}

func (r *run) stats() []sim.Option {
	c := r.counts
	return []sim.Option{
		sim.Opt("proposed", c.proposed),
		sim.Opt("acked", c.acknowledged),
		sim.Opt("failed", c.failed),
		sim.Opt("leaders", c.leaders),
		sim.Opt("crashes", c.crashes),
		sim.Opt("crashes_after_vote", c.crashesAfterVote),
		sim.Opt("power_losses", c.powerLosses),
		sim.Opt("pauses", c.pauses),
		sim.Opt("partitions", c.partitions),
		sim.Opt("slow_links", c.slowLinks),
		sim.Opt("leader_wait", c.leaderWaitMax.Round(time.Millisecond)),
	}
}
