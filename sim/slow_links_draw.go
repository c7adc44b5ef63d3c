package sim

import (
	"fmt"
	"math/rand/v2"
	"time"

	"sluice/sim/kernel"
)

// Slow links for the workloads whose runs are drawn in code (quorum,
// broker): in a third of the seeds their nemesis puts a host behind a slow
// link now and then (simnet.SlowLink, the cluster's slow-net). The draw
// and every choice the faults make come from a stream of the seed of its
// own, so the seeds that do not draw slow links ran as before they were
// added.
const (
	slowLinksStream   = "slow-net"
	slowLinksChanceIn = 3 // one seed in three
	slowLinksMeanMin  = time.Second
	slowLinksMeanMax  = 4 * time.Second
)

// SlowLinks is a seed's draw of slow links: the mean interval between two
// windows (zero: never), and the stream their choices come from.
type SlowLinks struct {
	Mean time.Duration
	Rand *rand.Rand
}

// SlowWindow is one slow link a nemesis puts a host behind: its one-way
// latency bounds and how long it lasts.
type SlowWindow struct {
	Low, High, For time.Duration
}

// DrawWindow draws one window from the seed's stream: the latency's lower
// bound in [lowMin, lowMax], its upper bound from there up to highMax (no
// lower than the lower bound), and a length up to forMax.
func (d SlowLinks) DrawWindow(lowMin, lowMax, highMax, forMax time.Duration) SlowWindow {
	w := SlowWindow{Low: kernel.Between(d.Rand, lowMin, lowMax)}
	w.High = kernel.Between(d.Rand, w.Low, max(w.Low, highMax))
	w.For = kernel.Between(d.Rand, 0, forMax)
	return w
}

// Describe says what the window does to host, for a trace note and a
// report's fault.
func (w SlowWindow) Describe(host string) string {
	return fmt.Sprintf("link of %s slow (%v-%v) for %v", host, w.Low.Round(time.Millisecond), w.High.Round(time.Millisecond), w.For)
}

// DrawSlowLinks draws a seed's slow links.
func DrawSlowLinks(seed uint64) SlowLinks {
	d := SlowLinks{Rand: kernel.NewRand(seed, slowLinksStream)}
	if d.Rand.IntN(slowLinksChanceIn) == 0 {
		d.Mean = kernel.Between(d.Rand, slowLinksMeanMin, slowLinksMeanMax)
	}
	return d
}
