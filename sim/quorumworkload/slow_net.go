package quorumworkload

import (
	"time"

	"sluice/sim/scenario"
)

// Slow links (scenario.KindSlowNet, drawn by sim.DrawSlowLinks): now and
// then the nemesis puts one voter, the leader half the time, behind a link
// that takes from 10-100 ms up to twice the election timeout one way, for
// a window. Votes and fetches arrive late, often after their senders timed
// out and moved to a later epoch: answers from epochs already over, a
// leader's fetch answers behind a successor's, pre-votes counted after the
// election they were for.

// Bounds of one slow link.
const (
	slowNetLatencyLowMin   = 10 * time.Millisecond
	slowNetLatencyLowMax   = 100 * time.Millisecond
	slowNetHighElectionMax = 2 // the latency reaches up to this many election timeouts
)

func (r *run) startSlowLinks() {
	r.kernel.Every(r.slowLinks.Rand, r.slowLinks.Mean, "nemesis.slow-net", func() bool { return r.faultsStopped }, r.slowLink)
}

// slowLink puts one node behind a slow link for a window.
func (r *run) slowLink() {
	rng := r.slowLinks.Rand
	n := r.nodes[rng.IntN(len(r.nodes))]
	if leader := r.leader(); leader != nil && rng.IntN(2) == 0 {
		n = leader
	}
	w := r.slowLinks.DrawWindow(slowNetLatencyLowMin, slowNetLatencyLowMax, slowNetHighElectionMax*r.settings.electionTimeout, r.settings.faultWindowMax)
	r.counts.slowLinks++
	r.applied(scenario.KindSlowNet)
	r.note(w.Describe(n.name))
	label := "slow-net-" + n.name
	r.recording.FaultStart(r.now(), label, []string{n.name}, w.Describe(n.name))
	restore := r.network.SlowLink(n.name, w.Low, w.High)
	r.kernel.Schedule(int64(w.For), nil, "nemesis.link-speed", func() {
		if r.faultsStopped {
			return // the heal restored it
		}
		r.recording.FaultEnd(r.now(), label)
		restore()
	})
}
