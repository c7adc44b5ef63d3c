package sim

import (
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

// DrawSlowLinks draws a seed's slow links.
func DrawSlowLinks(seed uint64) SlowLinks {
	d := SlowLinks{Rand: kernel.NewRand(seed, slowLinksStream)}
	if d.Rand.IntN(slowLinksChanceIn) == 0 {
		d.Mean = kernel.Between(d.Rand, slowLinksMeanMin, slowLinksMeanMax)
	}
	return d
}
