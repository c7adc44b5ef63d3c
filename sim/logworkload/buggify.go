package logworkload

import (
	"fmt"

	"sluice/core"
	"sluice/sim"
	"sluice/sim/kernel"
)

// BUGGIFY in this workload: like the cluster's swarm (sim/scenario's
// draw), about half the seeds switch core/log's sites on, each seed at an
// enable and a fire chance of its own.
const (
	// buggifyOnChance is the share of seeds that switch BUGGIFY on.
	buggifyOnChance = 0.5
	// buggifyChanceDrawMax bounds the enable and the fire chance drawn.
	buggifyChanceDrawMax = 0.5
	// buggifySettingsStream is the PRNG stream the chances are drawn
	// from: one of their own, so the rest of what a seed draws is the
	// same as before the workload switched BUGGIFY on.
	buggifySettingsStream = "settings/buggify"
)

// buggifySettings are a seed's BUGGIFY chances; both zero is off.
type buggifySettings struct {
	enable, fire float64
}

func drawBuggifySettings(seed uint64) buggifySettings {
	rng := kernel.NewRand(seed, buggifySettingsStream)
	if rng.Float64() >= buggifyOnChance {
		return buggifySettings{}
	}
	return buggifySettings{
		enable: roundChance(rng.Float64() * buggifyChanceDrawMax),
		fire:   roundChance(rng.Float64() * buggifyChanceDrawMax),
	}
}

// newBuggify returns the machine's sites, or nil (off, as in production)
// when either chance is zero. Their entropy is a stream of their own, as
// a cluster node's is.
func (b buggifySettings) newBuggify(seed uint64, machine string) *core.Buggify {
	if b.enable <= 0 || b.fire <= 0 {
		return nil
	}
	return core.NewBuggify(kernel.NewRand(seed, "buggify/"+machine), b.enable, b.fire)
}

// option is the chances for the result line, as the cluster prints them:
// buggify=enable/fire.
func (b buggifySettings) option() sim.Option {
	return sim.Opt("buggify", fmt.Sprintf("%v/%v", b.enable, b.fire))
}
