package quorumworkload

import (
	"fmt"
	"time"

	"sluice/sim/kernel"
	"sluice/sim/scenario"
)

// Slow links (scenario.KindSlowNet): in a third of the seeds the nemesis
// now and then puts one voter, the leader half the time, behind a link
// that takes from 10-100 ms up to twice the election timeout one way, for
// a window. Votes and fetches arrive late, often after their senders timed
// out and moved to a later epoch: answers from epochs already over, a
// leader's fetch answers behind a successor's, pre-votes counted after the
// election they were for. The draw and the faults come from a stream of
// the seed of their own, added later: the seeds that do not draw a slow
// link kept their runs.

// Bounds of the slow links a seed draws.
const (
	slowNetChanceIn        = 3 // one seed in three
	slowNetMeanDrawMin     = time.Second
	slowNetMeanDrawMax     = 4 * time.Second
	slowNetLatencyLowMin   = 10 * time.Millisecond
	slowNetLatencyLowMax   = 100 * time.Millisecond
	slowNetHighElectionMax = 2 // the latency reaches up to this many election timeouts
)

// slowNet is a seed's draw of slow links and the stream that drives them.
type slowNet struct {
	rng  random
	mean time.Duration // zero: never
	// slowed counts, per node, the slow-link windows in force on it: the
	// last to end restores the link.
	slowed map[string]int
}

func drawSlowNet(seed uint64) slowNet {
	d := slowNet{rng: kernel.NewRand(seed, "slow-net"), slowed: map[string]int{}}
	if d.rng.IntN(slowNetChanceIn) == 0 {
		d.mean = kernel.Between(d.rng, slowNetMeanDrawMin, slowNetMeanDrawMax)
	}
	return d
}

func (r *run) startSlowLinks() {
	r.kernel.Every(r.slowNet.rng, r.slowNet.mean, "nemesis.slow-net", func() bool { return r.faultsStopped }, r.slowLink)
}

// slowLink puts one node behind a slow link for a window.
func (r *run) slowLink() {
	rng := r.slowNet.rng
	n := r.nodes[rng.IntN(len(r.nodes))]
	if leader := r.leader(); leader != nil && rng.IntN(2) == 0 {
		n = leader
	}
	low := kernel.Between(rng, slowNetLatencyLowMin, slowNetLatencyLowMax)
	high := kernel.Between(rng, low, max(low, slowNetHighElectionMax*r.settings.electionTimeout))
	window := kernel.Between(rng, 0, r.settings.faultWindowMax)
	r.counts.slowLinks++
	r.applied(scenario.KindSlowNet)
	text := fmt.Sprintf("link of %s slow (%v-%v) for %v", n.name, low.Round(time.Millisecond), high.Round(time.Millisecond), window)
	r.note(text)
	label := "slow-net-" + n.name
	r.recording.FaultStart(r.now(), label, []string{n.name}, text)
	r.network.SlowLink(n.name, low, high)
	r.slowNet.slowed[n.name]++
	r.kernel.Schedule(int64(window), nil, "nemesis.link-speed", func() {
		if r.faultsStopped {
			return // the heal restored it
		}
		r.recording.FaultEnd(r.now(), label)
		if r.slowNet.slowed[n.name]--; r.slowNet.slowed[n.name] == 0 {
			r.network.RestoreLink(n.name)
		}
	})
}

// restoreLinks takes every node off its slow link, for the heal.
func (r *run) restoreLinks() {
	for _, n := range r.nodes {
		r.network.RestoreLink(n.name)
	}
	clear(r.slowNet.slowed)
}
