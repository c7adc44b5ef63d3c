package brokerworkload

import (
	"fmt"
	"strings"
	"time"

	"sluice/sim"
	"sluice/sim/kernel"
	"sluice/sim/simclient"
)

// groupName is the consumer group every run's group consumers join.
const groupName = "sluice-sim-group"

// groupSettings are what a seed decides about its consumer group: the
// consumers, their timeouts, the coordinator's settings, and the faults
// aimed at the group.
type groupSettings struct {
	consumers []consumerSettings

	sessionTimeout   time.Duration
	rebalanceTimeout time.Duration
	fetchMaxWait     time.Duration
	// verifyCommitChance is the chance a consumer reads its committed
	// offsets back after a commit is acknowledged.
	verifyCommitChance float64

	// The coordinator's: offsets.topic.num.partitions and
	// group.initial.rebalance.delay.ms.
	offsetsPartitions     int32
	initialRebalanceDelay time.Duration

	// Mean intervals of the group's faults, zero when the seed leaves
	// the fault out: a consumer leaving (and coming back after up to
	// rejoinDelayMax), and a consumer stalling (frozen for stallMin to
	// stallMax, long enough for its session to expire at the top).
	leaveMean      time.Duration
	rejoinDelayMax time.Duration
	stallMean      time.Duration
	stallMin       time.Duration
	stallMax       time.Duration
	// crashInRebalance is the chance that a consumer leaving or crashing
	// is followed, while the group rebalances, by a broker crash.
	crashInRebalance float64
}

// consumerSettings are one group consumer's.
type consumerSettings struct {
	// static consumers have a group.instance.id.
	static bool
	// assignors in order of preference; every consumer offers both, so
	// the group always agrees on one.
	assignors []string
}

// Bounds of what a seed may draw for its group.
const (
	consumersDrawMin              = 2
	consumersDrawMax              = 3
	staticChance                  = 0.3
	sessionTimeoutDrawMin         = time.Second
	sessionTimeoutDrawMax         = 4 * time.Second
	rebalanceTimeoutDrawMin       = 2 * time.Second
	rebalanceTimeoutDrawMax       = 6 * time.Second
	consumerFetchWaitDrawMin      = 50 * time.Millisecond
	consumerFetchWaitDrawMax      = 500 * time.Millisecond
	verifyCommitChanceDrawMax     = 0.3
	offsetsPartitionsDrawMax      = 4
	initialRebalanceDelayDrawMax  = 500 * time.Millisecond
	consumerLeaveMeanDrawMin      = 3 * time.Second
	consumerLeaveMeanDrawMax      = 10 * time.Second
	consumerRejoinDelayDrawMax    = 2 * time.Second
	consumerStallMeanDrawMin      = 2 * time.Second
	consumerStallMeanDrawMax      = 8 * time.Second
	consumerStallSessionsMax      = 3 // the longest stall, in session timeouts
	groupSessionTimeoutMinBroker  = 500 * time.Millisecond
	brokerCrashInRebalanceWaitMax = time.Second
)

func drawGroupSettings(rng random) groupSettings {
	var g groupSettings
	for range consumersDrawMin + rng.IntN(consumersDrawMax-consumersDrawMin+1) {
		c := consumerSettings{static: rng.Float64() < staticChance}
		c.assignors = []string{simclient.AssignorRange, simclient.AssignorRoundRobin}
		if rng.IntN(2) == 0 {
			c.assignors[0], c.assignors[1] = c.assignors[1], c.assignors[0]
		}
		g.consumers = append(g.consumers, c)
	}
	g.sessionTimeout = kernel.Between(rng, sessionTimeoutDrawMin, sessionTimeoutDrawMax)
	g.rebalanceTimeout = kernel.Between(rng, rebalanceTimeoutDrawMin, rebalanceTimeoutDrawMax)
	g.fetchMaxWait = kernel.Between(rng, consumerFetchWaitDrawMin, consumerFetchWaitDrawMax)
	if rng.IntN(2) == 0 {
		g.verifyCommitChance = rng.Float64() * verifyCommitChanceDrawMax
	}
	g.offsetsPartitions = 1 + int32(rng.IntN(offsetsPartitionsDrawMax))
	g.initialRebalanceDelay = kernel.Between(rng, 0, initialRebalanceDelayDrawMax)
	if rng.IntN(2) == 0 {
		g.leaveMean = kernel.Between(rng, consumerLeaveMeanDrawMin, consumerLeaveMeanDrawMax)
	}
	g.rejoinDelayMax = kernel.Between(rng, 0, consumerRejoinDelayDrawMax)
	if rng.IntN(2) == 0 {
		g.stallMean = kernel.Between(rng, consumerStallMeanDrawMin, consumerStallMeanDrawMax)
	}
	g.stallMin = g.sessionTimeout / 2
	g.stallMax = time.Duration(float64(g.sessionTimeout) * consumerStallSessionsMax)
	if rng.IntN(2) == 0 {
		g.crashInRebalance = rng.Float64()
	}
	return g
}

// options lists the group's settings for the result line.
func (g groupSettings) options() []sim.Option {
	var consumers []string
	for _, c := range g.consumers {
		kind := "dynamic"
		if c.static {
			kind = "static"
		}
		consumers = append(consumers, fmt.Sprintf("%s/%s", kind, strings.Join(c.assignors, "+")))
	}
	return []sim.Option{
		sim.Opt("consumers", strings.Join(consumers, ",")),
		sim.Opt("session_timeout", g.sessionTimeout.Round(time.Millisecond)),
		sim.Opt("rebalance_timeout", g.rebalanceTimeout.Round(time.Millisecond)),
		sim.Opt("consumer_fetch_wait", g.fetchMaxWait.Round(time.Millisecond)),
		sim.Opt("verify_commits", roundChance(g.verifyCommitChance)),
		sim.Opt("offsets_partitions", g.offsetsPartitions),
		sim.Opt("initial_rebalance_delay", g.initialRebalanceDelay.Round(time.Millisecond)),
		sim.Opt("consumer_leave_every", meanText(g.leaveMean)),
		sim.Opt("consumer_stall_every", meanText(g.stallMean)),
		sim.Opt("crash_in_rebalance", roundChance(g.crashInRebalance)),
	}
}
