package brokerworkload

import (
	"time"

	"sluice/sim/scenario"
)

// Slow links (scenario.KindSlowNet, drawn by sim.DrawSlowLinks): now and
// then the nemesis puts the broker, or one client, behind a link that takes
// from 10-100 ms up to a second one way, for a window. Requests then land
// after their clients gave up and retried (a produce retried on a new
// connection while the first attempt is still on its way, a commit from a
// generation the group has left), and answers after the client moved on.

// Bounds of one slow link.
const (
	slowNetLatencyLowMin = 10 * time.Millisecond
	slowNetLatencyLowMax = 100 * time.Millisecond
	slowNetLatencyMax    = time.Second
	slowNetWindowMax     = 2 * time.Second
)

// slowNetKind names the fault in the coverage line.
const slowNetKind = string(scenario.KindSlowNet)

func (r *run) startSlowLinks() {
	r.kernel.Every(r.slowLinks.Rand, r.slowLinks.Mean, "nemesis.slow-net", func() bool { return r.faultsStopped }, r.slowLink)
}

// slowLink puts the broker (half the time) or one client behind a slow
// link for a window.
func (r *run) slowLink() {
	rng := r.slowLinks.Rand
	host := nodeName
	if rng.IntN(2) == 0 {
		host = r.clients[rng.IntN(len(r.clients))].Name()
	}
	w := r.slowLinks.DrawWindow(slowNetLatencyLowMin, slowNetLatencyLowMax, slowNetLatencyMax, slowNetWindowMax)
	r.counts.slowLinks++
	r.note(w.Describe(host))
	label := "slow-net-" + host
	r.recordFaultStart(label, host, w.Describe(host))
	restore := r.network.SlowLink(host, w.Low, w.High)
	r.kernel.Schedule(int64(w.For), nil, "nemesis.link-speed", func() {
		if r.faultsStopped {
			return // the heal restored it
		}
		r.recordFaultEnd(label)
		restore()
	})
}
