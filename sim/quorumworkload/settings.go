package quorumworkload

import (
	"fmt"
	"time"

	"sluice/sim"
	"sluice/sim/kernel"
	"sluice/sim/simdisk"
	"sluice/sim/simnet"
)

// random is the part of a kernel.NewRand stream the workload draws from.
type random interface {
	IntN(n int) int
	Int64N(n int64) int64
	Float64() float64
}

// settings are everything a seed decides about a run, drawn before it
// starts. About half the seeds leave any one fault out entirely.
type settings struct {
	voters    int
	observers int

	electionTimeout time.Duration
	fetchTimeout    time.Duration
	requestTimeout  time.Duration
	snapshotEvery   int

	network simnet.Faults
	disk    simdisk.Faults
	// clockRates are each node's clock rate (drift), by node index.
	clockRates []float64

	safety time.Duration
	// proposeEvery is the mean pause between proposals.
	proposeEvery time.Duration

	// Mean intervals of the nemesis's faults, zero when left out.
	crashMean      time.Duration
	powerLossMean  time.Duration
	pauseMean      time.Duration
	partitionMean  time.Duration
	clockJumpMean  time.Duration
	fullDiskMean   time.Duration
	slowDiskMean   time.Duration
	restartMax     time.Duration
	faultWindowMax time.Duration
}

// Bounds of what a seed may draw.
const (
	votersDrawMin          = 3
	votersDrawMax          = 5
	observerChance         = 0.3
	electionTimeoutDrawMin = 100 * time.Millisecond
	electionTimeoutDrawMax = 300 * time.Millisecond
	// The fetch timeout stays well above the slowest sync a healthy disk
	// draws, or check-quorum would resign healthy leaders all the time.
	fetchTimeoutFactorMin = 2
	fetchTimeoutFactorMax = 4
	snapshotEveryDrawMin  = 5
	snapshotEveryDrawMax  = 50
	snapshotOffChance     = 0.2
	latencyMaxDraw        = 3 * time.Millisecond
	syncLatencyDrawMax    = 3 * time.Millisecond
	readCorruptionDrawMax = 0.01
	syncFailureDrawMax    = 0.003
	clockDriftMax         = 0.05
	safetyDrawMin         = 3 * time.Second
	safetyDrawMax         = 6 * time.Second
	proposeEveryDrawMin   = 20 * time.Millisecond
	proposeEveryDrawMax   = 120 * time.Millisecond
	crashMeanDrawMin      = 500 * time.Millisecond
	crashMeanDrawMax      = 3 * time.Second
	powerLossMeanDrawMin  = 2 * time.Second
	powerLossMeanDrawMax  = 8 * time.Second
	pauseMeanDrawMin      = time.Second
	pauseMeanDrawMax      = 4 * time.Second
	partitionMeanDrawMin  = 500 * time.Millisecond
	partitionMeanDrawMax  = 3 * time.Second
	clockJumpMeanDraw     = 2 * time.Second
	clockJumpMax          = time.Minute
	fullDiskMeanDrawMin   = time.Second
	fullDiskMeanDrawMax   = 4 * time.Second
	slowDiskMeanDrawMin   = time.Second
	slowDiskMeanDrawMax   = 4 * time.Second
	slowDiskLatencyMax    = 50 * time.Millisecond
	restartDrawMax        = 500 * time.Millisecond
	faultWindowDrawMin    = 200 * time.Millisecond
	faultWindowDrawMax    = 1500 * time.Millisecond
	fullDiskHeadroomMax   = 2 << 10
)

func drawSettings(rng random) settings {
	var s settings
	s.voters = votersDrawMin + rng.IntN(votersDrawMax-votersDrawMin+1)
	if rng.Float64() < observerChance {
		s.observers = 1
	}
	s.electionTimeout = kernel.Between(rng, electionTimeoutDrawMin, electionTimeoutDrawMax)
	s.fetchTimeout = time.Duration(fetchTimeoutFactorMin+rng.IntN(fetchTimeoutFactorMax-fetchTimeoutFactorMin+1)) * s.electionTimeout
	s.requestTimeout = s.fetchTimeout / 2
	if rng.Float64() >= snapshotOffChance {
		s.snapshotEvery = snapshotEveryDrawMin + rng.IntN(snapshotEveryDrawMax-snapshotEveryDrawMin+1)
	}
	s.network.LatencyMax = time.Duration(rng.Int64N(int64(latencyMaxDraw) + 1))
	s.network.LatencyMin = time.Duration(rng.Int64N(int64(s.network.LatencyMax) + 1))
	s.disk.SyncLatencyMax = time.Duration(rng.Int64N(int64(syncLatencyDrawMax) + 1))
	s.disk.SyncLatencyMin = time.Duration(rng.Int64N(int64(s.disk.SyncLatencyMax) + 1))
	if rng.IntN(2) == 0 {
		s.disk.TornWrite = rng.Float64()
	}
	if rng.IntN(2) == 0 {
		s.disk.ReadCorruption = rng.Float64() * readCorruptionDrawMax
	}
	if rng.IntN(3) == 0 {
		s.disk.SyncFailure = rng.Float64() * syncFailureDrawMax
	}
	for range s.voters + s.observers {
		rate := 1.0
		if rng.IntN(2) == 0 {
			rate += (2*rng.Float64() - 1) * clockDriftMax
		}
		s.clockRates = append(s.clockRates, rate)
	}
	s.safety = kernel.Between(rng, safetyDrawMin, safetyDrawMax)
	s.proposeEvery = kernel.Between(rng, proposeEveryDrawMin, proposeEveryDrawMax)
	if rng.IntN(4) != 0 {
		s.crashMean = kernel.Between(rng, crashMeanDrawMin, crashMeanDrawMax)
	}
	if rng.IntN(3) == 0 {
		s.powerLossMean = kernel.Between(rng, powerLossMeanDrawMin, powerLossMeanDrawMax)
	}
	if rng.IntN(2) == 0 {
		s.pauseMean = kernel.Between(rng, pauseMeanDrawMin, pauseMeanDrawMax)
	}
	if rng.IntN(4) != 0 {
		s.partitionMean = kernel.Between(rng, partitionMeanDrawMin, partitionMeanDrawMax)
	}
	if rng.IntN(3) == 0 {
		s.clockJumpMean = clockJumpMeanDraw
	}
	if rng.IntN(4) == 0 {
		s.fullDiskMean = kernel.Between(rng, fullDiskMeanDrawMin, fullDiskMeanDrawMax)
	}
	if rng.IntN(3) == 0 {
		s.slowDiskMean = kernel.Between(rng, slowDiskMeanDrawMin, slowDiskMeanDrawMax)
	}
	s.restartMax = kernel.Between(rng, 0, restartDrawMax)
	s.faultWindowMax = kernel.Between(rng, faultWindowDrawMin, faultWindowDrawMax)
	return s
}

// options lists the settings for the result line, in a stable order.
func (s settings) options() []sim.Option {
	return []sim.Option{
		sim.Opt("voters", s.voters),
		sim.Opt("observers", s.observers),
		sim.Opt("election_timeout", s.electionTimeout.Round(time.Millisecond)),
		sim.Opt("fetch_timeout", s.fetchTimeout.Round(time.Millisecond)),
		sim.Opt("snapshot_every", s.snapshotEvery),
		sim.Opt("latency", rangeText(s.network.LatencyMin, s.network.LatencyMax)),
		sim.Opt("sync_latency", rangeText(s.disk.SyncLatencyMin, s.disk.SyncLatencyMax)),
		sim.Opt("torn_write", roundChance(s.disk.TornWrite)),
		sim.Opt("read_corruption", roundChance(s.disk.ReadCorruption)),
		sim.Opt("sync_failure", roundChance(s.disk.SyncFailure)),
		sim.Opt("drift", driftText(s.clockRates)),
		sim.Opt("safety", s.safety.Round(time.Millisecond)),
		sim.Opt("propose_every", s.proposeEvery.Round(time.Millisecond)),
		sim.Opt("crash_every", meanText(s.crashMean)),
		sim.Opt("power_loss_every", meanText(s.powerLossMean)),
		sim.Opt("pause_every", meanText(s.pauseMean)),
		sim.Opt("partition_every", meanText(s.partitionMean)),
		sim.Opt("clock_jump_every", meanText(s.clockJumpMean)),
		sim.Opt("full_disk_every", meanText(s.fullDiskMean)),
		sim.Opt("slow_disk_every", meanText(s.slowDiskMean)),
		sim.Opt("restart_max", s.restartMax.Round(time.Millisecond)),
		sim.Opt("fault_window_max", s.faultWindowMax.Round(time.Millisecond)),
	}
}

func rangeText(low, high time.Duration) string {
	return low.Round(time.Microsecond).String() + "-" + high.Round(time.Microsecond).String()
}

func meanText(d time.Duration) string {
	if d == 0 {
		return "never"
	}
	return d.Round(time.Millisecond).String()
}

func driftText(rates []float64) string {
	text := ""
	for i, r := range rates {
		if i > 0 {
			text += ","
		}
		text += fmt.Sprintf("%+.3f", r-1)
	}
	return text
}

func roundChance(p float64) float64 { return float64(int(p*10000)) / 10000 }
