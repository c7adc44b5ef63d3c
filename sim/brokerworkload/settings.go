package brokerworkload

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"sluice/core/batch"
	"sluice/sim"
	"sluice/sim/kernel"
	"sluice/sim/simdisk"
	"sluice/sim/simnet"
)

// random is the part of a kernel.NewRand stream the workload draws from:
// a seeded stream, never global randomness.
type random interface {
	IntN(n int) int
	Int64N(n int64) int64
	Float64() float64
}

// settings are everything a seed decides about a run, drawn before it
// starts (swarm testing: each seed gets its own cluster shape and fault
// mix, and about half the seeds leave any one fault out entirely).
type settings struct {
	partitions int
	producers  []producerSettings
	readers    [][]int32 // each reader's partitions
	network    simnet.Faults
	disk       simdisk.Faults

	safety time.Duration
	// thinkMax bounds the pause a producer lane takes between sends.
	thinkMax time.Duration

	requestTimeout  time.Duration
	deliveryTimeout time.Duration
	produceTimeout  time.Duration
	fetchMaxWait    time.Duration

	// Mean intervals of the nemesis's faults, zero when the seed leaves
	// the fault out.
	brokerCrashMean  time.Duration
	resetMean        time.Duration
	clientCrashMean  time.Duration
	fullDiskMean     time.Duration
	slowDiskMean     time.Duration
	restartDelayMax  time.Duration
	crashUnderLoad   float64 // chance a broker crash comes after a burst of writes
	resetAllChance   float64 // chance a reset breaks every connection of the broker
	clientRestartMax time.Duration

	group groupSettings

	// buggify is the seed's BUGGIFY chances (see buggify.go).
	buggify sim.BuggifyChances
}

// producerSettings are one producer's.
type producerSettings struct {
	idempotent bool
	acks       int16
	partitions []int32
	// batchMax is how many records one send may carry (1 to batchMax,
	// drawn per send); zero or one: a record per batch.
	batchMax int
	// compression is the codec every batch is sent with (0 none).
	compression int
}

// Bounds of what a seed may draw.
const (
	partitionsDrawMax        = 4
	producersDrawMax         = 3
	readersDrawMax           = 2
	acksOneChance            = 0.2
	idempotentChance         = 0.5
	latencyMinDrawMax        = time.Millisecond
	latencySpreadDrawMax     = 5 * time.Millisecond
	syncLatencyDrawMax       = 5 * time.Millisecond
	readCorruptionDrawMax    = 0.01
	syncFailureDrawMax       = 0.005
	safetyDrawMin            = 10 * time.Second
	safetyDrawMax            = 20 * time.Second
	thinkDrawMin             = 20 * time.Millisecond
	thinkDrawMax             = 150 * time.Millisecond
	requestTimeoutDrawMin    = 500 * time.Millisecond
	requestTimeoutDrawMax    = 3 * time.Second
	deliveryTimeoutDrawMin   = time.Second
	deliveryTimeoutDrawMax   = 5 * time.Second
	fetchMaxWaitDrawMin      = 10 * time.Millisecond
	fetchMaxWaitDrawMax      = 300 * time.Millisecond
	brokerCrashMeanDrawMin   = time.Second
	brokerCrashMeanDrawMax   = 6 * time.Second
	resetMeanDrawMin         = 300 * time.Millisecond
	resetMeanDrawMax         = 3 * time.Second
	clientCrashMeanDrawMin   = 2 * time.Second
	clientCrashMeanDrawMax   = 8 * time.Second
	fullDiskMeanDrawMin      = 2 * time.Second
	fullDiskMeanDrawMax      = 8 * time.Second
	slowDiskMeanDrawMin      = 2 * time.Second
	slowDiskMeanDrawMax      = 8 * time.Second
	restartDelayDrawMax      = time.Second
	clientRestartDelayMax    = 500 * time.Millisecond
	fullDiskWindowMax        = 500 * time.Millisecond
	fullDiskHeadroomBytesMax = 4 << 10
	slowDiskWindowMax        = time.Second
	slowDiskLatencyMin       = 20 * time.Millisecond
	slowDiskLatencyMax       = 300 * time.Millisecond
	crashBurstMax            = 300 * time.Millisecond
	batchChance              = 0.5
	batchDrawMax             = 5
	compressChance           = 0.3
)

// drawBatching has some producers send several records per batch and
// some compress their batches, as real clients do, from a stream of its
// own: a seed where no producer does either runs as it did before.
func drawBatching(rng random, producers []producerSettings) {
	for i := range producers {
		p := &producers[i]
		if rng.Float64() < batchChance {
			p.batchMax = 2 + rng.IntN(batchDrawMax-1)
		}
		if rng.Float64() < compressChance {
			p.compression = batch.CompressionGzip + rng.IntN(batch.CompressionZstd)
		}
	}
}

func drawSettings(rng random) settings {
	var s settings
	s.partitions = 1 + rng.IntN(partitionsDrawMax)
	all := make([]int32, s.partitions)
	for i := range all {
		all[i] = int32(i)
	}
	for range 1 + rng.IntN(producersDrawMax) {
		p := producerSettings{idempotent: rng.Float64() < idempotentChance, acks: -1, partitions: all}
		if rng.Float64() < acksOneChance {
			// acks=1 may lose what it was told was written, so it
			// writes to some partitions only: the rest keep the
			// full durability check.
			p.acks = 1
			p.partitions = subset(rng, all)
		}
		s.producers = append(s.producers, p)
	}
	for i := range 1 + rng.IntN(readersDrawMax) {
		if i == 0 {
			s.readers = append(s.readers, all) // someone reads everything
		} else {
			s.readers = append(s.readers, subset(rng, all))
		}
	}
	s.network.LatencyMin = time.Duration(rng.Int64N(int64(latencyMinDrawMax) + 1))
	s.network.LatencyMax = s.network.LatencyMin + time.Duration(rng.Int64N(int64(latencySpreadDrawMax)+1))
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
	s.safety = kernel.Between(rng, safetyDrawMin, safetyDrawMax)
	s.thinkMax = kernel.Between(rng, thinkDrawMin, thinkDrawMax)
	s.requestTimeout = kernel.Between(rng, requestTimeoutDrawMin, requestTimeoutDrawMax)
	s.deliveryTimeout = kernel.Between(rng, deliveryTimeoutDrawMin, deliveryTimeoutDrawMax)
	// The broker's wait for acks=all stays below the client's request
	// timeout, so both paths to an unknown outcome get exercised.
	s.produceTimeout = kernel.Between(rng, s.requestTimeout/4, s.requestTimeout*3/4)
	// Some wait, always: with none an empty fetch is answered at once,
	// a reader polls as fast as the network turns around (seed 5394 did
	// 66,000 polls of one partition), and the search of the log runs out
	// of its budget.
	s.fetchMaxWait = kernel.Between(rng, fetchMaxWaitDrawMin, fetchMaxWaitDrawMax)
	if rng.IntN(4) != 0 {
		s.brokerCrashMean = kernel.Between(rng, brokerCrashMeanDrawMin, brokerCrashMeanDrawMax)
	}
	if rng.IntN(2) == 0 {
		s.resetMean = kernel.Between(rng, resetMeanDrawMin, resetMeanDrawMax)
	}
	if rng.IntN(2) == 0 {
		s.clientCrashMean = kernel.Between(rng, clientCrashMeanDrawMin, clientCrashMeanDrawMax)
	}
	if rng.IntN(3) == 0 {
		s.fullDiskMean = kernel.Between(rng, fullDiskMeanDrawMin, fullDiskMeanDrawMax)
	}
	if rng.IntN(3) == 0 {
		s.slowDiskMean = kernel.Between(rng, slowDiskMeanDrawMin, slowDiskMeanDrawMax)
	}
	s.restartDelayMax = kernel.Between(rng, 0, restartDelayDrawMax)
	s.crashUnderLoad = rng.Float64()
	s.resetAllChance = rng.Float64()
	s.clientRestartMax = clientRestartDelayMax
	// Drawn last, so the draws above stay what they were before groups.
	s.group = drawGroupSettings(rng)
	return s
}

// subset draws a non-empty subset of partitions, in order.
func subset(rng random, all []int32) []int32 {
	for {
		var chosen []int32
		for _, p := range all {
			if rng.IntN(2) == 0 {
				chosen = append(chosen, p)
			}
		}
		if len(chosen) > 0 {
			return chosen
		}
	}
}

// options lists the settings for the result line, in a stable order.
func (s settings) options() []sim.Option {
	var producers []string
	for _, p := range s.producers {
		kind := "plain"
		if p.idempotent {
			kind = "idem"
		}
		text := fmt.Sprintf("%s/acks%d/%s", kind, p.acks, partitionList(p.partitions))
		if p.batchMax > 1 {
			text += "/batch" + strconv.Itoa(p.batchMax)
		}
		if p.compression != batch.CompressionNone {
			text += "/" + batch.CodecName(p.compression)
		}
		producers = append(producers, text)
	}
	var readers []string
	for _, r := range s.readers {
		readers = append(readers, partitionList(r))
	}
	return append([]sim.Option{
		sim.Opt("partitions", s.partitions),
		sim.Opt("producers", strings.Join(producers, ",")),
		sim.Opt("readers", strings.Join(readers, ",")),
		sim.Opt("latency", rangeText(s.network.LatencyMin, s.network.LatencyMax)),
		sim.Opt("sync_latency", rangeText(s.disk.SyncLatencyMin, s.disk.SyncLatencyMax)),
		sim.Opt("torn_write", roundChance(s.disk.TornWrite)),
		sim.Opt("read_corruption", roundChance(s.disk.ReadCorruption)),
		sim.Opt("sync_failure", roundChance(s.disk.SyncFailure)),
		sim.Opt("safety", s.safety.Round(time.Millisecond)),
		sim.Opt("think_max", s.thinkMax.Round(time.Millisecond)),
		sim.Opt("request_timeout", s.requestTimeout.Round(time.Millisecond)),
		sim.Opt("delivery_timeout", s.deliveryTimeout.Round(time.Millisecond)),
		sim.Opt("produce_timeout", s.produceTimeout.Round(time.Millisecond)),
		sim.Opt("fetch_wait", s.fetchMaxWait.Round(time.Millisecond)),
		sim.Opt("broker_crash_every", meanText(s.brokerCrashMean)),
		sim.Opt("reset_every", meanText(s.resetMean)),
		sim.Opt("client_crash_every", meanText(s.clientCrashMean)),
		sim.Opt("full_disk_every", meanText(s.fullDiskMean)),
		sim.Opt("slow_disk_every", meanText(s.slowDiskMean)),
		sim.Opt("restart_delay_max", s.restartDelayMax.Round(time.Millisecond)),
		sim.Opt("crash_under_load", roundChance(s.crashUnderLoad)),
	}, append(s.group.options(), s.buggify.Option())...)
}

func partitionList(partitions []int32) string {
	var parts []string
	for _, p := range partitions {
		parts = append(parts, fmt.Sprint(p))
	}
	return "p" + strings.Join(parts, "+")
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

func roundChance(p float64) float64 { return float64(int(p*10000)) / 10000 }
