package brokerworkload

import (
	"fmt"
	"time"

	"sluice/sim/kernel"
	"sluice/sim/scenario"
)

// Slow links (scenario.KindSlowNet): in a third of the seeds the nemesis
// now and then puts the broker, or one client, behind a link that takes
// from 10-100 ms up to a second one way, for a window. Requests then land
// after their clients gave up and retried (a produce retried on a new
// connection while the first attempt is still on its way, a commit from a
// generation the group has left), and answers after the client moved on.
// The draw and the faults come from a stream of the seed of their own,
// added later: the seeds that do not draw a slow link kept their runs.

// Bounds of the slow links a seed draws.
const (
	slowNetChanceIn      = 3 // one seed in three
	slowNetMeanDrawMin   = time.Second
	slowNetMeanDrawMax   = 4 * time.Second
	slowNetLatencyLowMin = 10 * time.Millisecond
	slowNetLatencyLowMax = 100 * time.Millisecond
	slowNetLatencyMax    = time.Second
	slowNetWindowMax     = 2 * time.Second
)

// slowNet is a seed's draw of slow links and the stream that drives them.
type slowNet struct {
	rng  random
	mean time.Duration // zero: never
	// slowed counts, per host, the slow-link windows in force on it: the
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

// slowLink puts the broker (half the time) or one client behind a slow
// link for a window.
func (r *run) slowLink() {
	rng := r.slowNet.rng
	host := nodeName
	if rng.IntN(2) == 0 {
		host = r.clients[rng.IntN(len(r.clients))].Name()
	}
	low := kernel.Between(rng, slowNetLatencyLowMin, slowNetLatencyLowMax)
	high := kernel.Between(rng, low, slowNetLatencyMax)
	window := kernel.Between(rng, 0, slowNetWindowMax)
	r.counts.slowLinks++
	text := fmt.Sprintf("link of %s slow (%v-%v) for %v", host, low.Round(time.Millisecond), high.Round(time.Millisecond), window)
	r.note(text)
	label := "slow-net-" + host
	r.recordFaultStart(label, host, text)
	r.network.SlowLink(host, low, high)
	r.slowNet.slowed[host]++
	r.kernel.Schedule(int64(window), nil, "nemesis.link-speed", func() {
		if r.faultsStopped {
			return // the heal restored it
		}
		r.recordFaultEnd(label)
		if r.slowNet.slowed[host]--; r.slowNet.slowed[host] == 0 {
			r.network.RestoreLink(host)
		}
	})
}

// restoreLinks takes every host off its slow link, for the heal.
func (r *run) restoreLinks() {
	for _, host := range r.network.SlowHosts() {
		r.network.RestoreLink(host)
	}
	clear(r.slowNet.slowed)
}

// slowNetKind names the fault in the coverage line.
const slowNetKind = string(scenario.KindSlowNet)
