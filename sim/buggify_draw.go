package sim

import (
	"fmt"
	"math"

	"sluice/core"
	"sluice/sim/kernel"
)

// BUGGIFY for the workloads whose runs are drawn in code (log, broker):
// like the cluster's swarm (sim/scenario's draw), about half the seeds
// switch core's sites on, each seed at an enable and a fire chance of its
// own. The cluster workload takes its chances from its scenario instead.
const (
	// buggifyOnChance is the share of seeds that switch BUGGIFY on.
	buggifyOnChance = 0.5
	// BuggifyChanceDrawMax bounds the enable and the fire chance drawn.
	BuggifyChanceDrawMax = 0.5
	// buggifyChancesStream is the PRNG stream the chances are drawn
	// from: one of their own, so the rest of what a seed draws is the
	// same as before the workloads switched BUGGIFY on.
	buggifyChancesStream = "settings/buggify"
)

// BuggifyChances are a seed's BUGGIFY chances; both zero is off.
type BuggifyChances struct {
	Enable, Fire float64
}

// DrawBuggifyChances draws a seed's chances.
func DrawBuggifyChances(seed uint64) BuggifyChances {
	rng := kernel.NewRand(seed, buggifyChancesStream)
	if rng.Float64() >= buggifyOnChance {
		return BuggifyChances{}
	}
	return BuggifyChances{
		Enable: roundChance(rng.Float64() * BuggifyChanceDrawMax),
		Fire:   roundChance(rng.Float64() * BuggifyChanceDrawMax),
	}
}

// New returns a machine's sites, or nil (off, as in production) when
// either chance is zero. Their entropy is a stream of their own, as a
// cluster node's is; the machine keeps them across restarts, so each site
// is enabled or not for the whole run.
func (c BuggifyChances) New(seed uint64, machine string) *core.Buggify {
	if c.Enable <= 0 || c.Fire <= 0 {
		return nil
	}
	return core.NewBuggify(kernel.NewRand(seed, "buggify/"+machine), c.Enable, c.Fire)
}

// Option is the chances for the result line, as the cluster prints them:
// buggify=enable/fire.
func (c BuggifyChances) Option() Option {
	return Opt("buggify", fmt.Sprintf("%v/%v", c.Enable, c.Fire))
}

// roundChance keeps four decimals, so a chance reads the same on the
// result line as it was drawn (truncated, as the workloads' other
// chances are).
func roundChance(p float64) float64 { return math.Trunc(p*10000) / 10000 }
