package logworkload

import (
	"math/rand/v2"
	"time"

	"sluice/core/log"
	"sluice/sim"
	"sluice/sim/simdisk"
)

// settings are everything a seed decides about a run, drawn before it
// starts (swarm testing: each seed gets its own fault mix).
type settings struct {
	config     log.Config
	faults     simdisk.Faults
	operations int

	// fullDiskChance is the chance, per operation, that a full-disk
	// window opens (or, if one is open, closes).
	fullDiskChance float64
	// crashChance is the chance, per operation, of a crash.
	crashChance float64
	// syncChance is the chance, per operation, of a Sync call.
	syncChance float64
	// restartOneIn: one in this many truncations is a restart
	// (TruncateFullyAndStartAt) instead.
	restartOneIn int

	// compaction is what the seed does with log compaction, if anything
	// (see compaction.go).
	compaction compactionSettings
	// compression is what share of its batches the seed compresses (see
	// compression.go).
	compression compressionSettings

	// buggify is the seed's BUGGIFY chances for core/log's sites (see
	// buggify.go).
	buggify sim.BuggifyChances
}

// Bounds of what a seed may draw.
const (
	segmentBytesDrawMin    = 512
	segmentBytesDrawMax    = 64 << 10
	indexIntervalDrawMax   = 4096
	operationsDrawMin      = 200
	operationsDrawMax      = 500
	readCorruptionDrawMax  = 0.02
	syncFailureDrawMax     = 0.03
	syncLatencyDrawMax     = 5 * time.Millisecond
	retentionBytesDrawMin  = 2 << 10
	retentionBytesDrawMax  = 256 << 10
	retentionAgeDrawMax    = 10 * time.Second
	segmentAgeDrawMin      = 100 * time.Millisecond
	segmentAgeDrawMax      = 10 * time.Second
	fullDiskChanceDrawMax  = 0.02
	crashChanceDrawMax     = 0.05
	restartOneInDefault    = 4
	fullDiskHeadroomMax    = 4 << 10
	recordsPerBatchMax     = 5
	recordValueBytesMax    = 100
	batchesPerAppendMax    = 3
	timestampSkewMax       = 2000 // milliseconds either side of the clock
	pauseShortMax          = 3 * time.Millisecond
	pauseLongMax           = 2 * time.Second
	pauseLongChance        = 0.02
	readMaxBytesMax        = 4096
	epochBumpChance        = 0.03
	replicatedAppendChance = 0.2
	healAttemptsMax        = 3
	healWait               = time.Second
)

func drawSettings(rng *rand.Rand) settings {
	var s settings
	s.config = log.DefaultConfig()
	// Log-uniform, so small segments (many rolls) are as likely as large.
	s.config.SegmentBytes = logUniform(rng, segmentBytesDrawMin, segmentBytesDrawMax)
	s.config.IndexIntervalBytes = rng.IntN(indexIntervalDrawMax + 1)
	s.config.SegmentAge = segmentAgeDrawMin + time.Duration(rng.Int64N(int64(segmentAgeDrawMax-segmentAgeDrawMin)))
	s.config.RetentionBytes = log.Unlimited
	if rng.IntN(2) == 0 {
		s.config.RetentionBytes = logUniform(rng, retentionBytesDrawMin, retentionBytesDrawMax)
	}
	s.config.RetentionAge = log.Unlimited
	if rng.IntN(2) == 0 {
		s.config.RetentionAge = time.Duration(rng.Int64N(int64(retentionAgeDrawMax)))
	}
	// Each fault is on for about half the seeds, at a strength of its own.
	if rng.IntN(2) == 0 {
		s.faults.ReadCorruption = rng.Float64() * readCorruptionDrawMax
	}
	if rng.IntN(2) == 0 {
		s.faults.SyncFailure = rng.Float64() * syncFailureDrawMax
	}
	if rng.IntN(3) != 0 {
		s.faults.TornWrite = rng.Float64()
	}
	s.faults.SyncLatencyMax = time.Duration(rng.Int64N(int64(syncLatencyDrawMax) + 1))
	s.faults.SyncLatencyMin = time.Duration(rng.Int64N(int64(s.faults.SyncLatencyMax) + 1))
	if rng.IntN(3) == 0 {
		s.fullDiskChance = rng.Float64() * fullDiskChanceDrawMax
	}
	s.crashChance = rng.Float64() * crashChanceDrawMax
	s.restartOneIn = restartOneInDefault
	s.syncChance = 0.05 + rng.Float64()*0.3
	s.operations = operationsDrawMin + rng.IntN(operationsDrawMax-operationsDrawMin+1)
	return s
}

// logUniform draws an integer in [low, high] whose logarithm is uniform.
func logUniform(rng *rand.Rand, low, high int64) int64 {
	value := low
	for value*2 <= high && rng.IntN(2) == 0 {
		value *= 2
	}
	return min(value+rng.Int64N(value), high)
}

// options lists the settings for the result line, in a stable order.
func (s settings) options() []sim.Option {
	return []sim.Option{
		sim.Opt("segment_bytes", s.config.SegmentBytes),
		sim.Opt("index_interval", s.config.IndexIntervalBytes),
		sim.Opt("segment_age", s.config.SegmentAge.Round(time.Millisecond)),
		sim.Opt("retention_bytes", s.config.RetentionBytes),
		sim.Opt("retention_age", s.config.RetentionAge.Round(time.Millisecond)),
		sim.Opt("read_corruption", roundChance(s.faults.ReadCorruption)),
		sim.Opt("sync_failure", roundChance(s.faults.SyncFailure)),
		sim.Opt("torn_write", roundChance(s.faults.TornWrite)),
		sim.Opt("sync_latency", s.faults.SyncLatencyMin.Round(time.Microsecond).String()+"-"+s.faults.SyncLatencyMax.Round(time.Microsecond).String()),
		sim.Opt("full_disk", roundChance(s.fullDiskChance)),
		sim.Opt("crash", roundChance(s.crashChance)),
		sim.Opt("sync", roundChance(s.syncChance)),
		sim.Opt("ops", s.operations),
		sim.Opt("compaction", s.compaction.on),
		sim.Opt("keys", s.compaction.keys),
		sim.Opt("tombstones", roundChance(s.compaction.tombstoneChance)),
		sim.Opt("compact", roundChance(s.compaction.compactChance)),
		sim.Opt("delete_retention", s.config.DeleteRetention.Round(time.Millisecond)),
		sim.Opt("min_compaction_lag", s.config.MinCompactionLag.Round(time.Millisecond)),
		sim.Opt("dirty_ratio", roundChance(s.config.MinCleanableDirtyRatio)),
		sim.Opt("compressed", roundChance(s.compression.chance)),
		s.buggify.Option(),
	}
}

func roundChance(p float64) float64 { return float64(int(p*10000)) / 10000 }
