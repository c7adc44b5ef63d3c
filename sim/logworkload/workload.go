package logworkload

import (
	"fmt"
	"log/slog"
	"math/rand/v2"
	"slices"
	"time"

	"sluice/core"
	"sluice/core/log"
	"sluice/sim"
	"sluice/sim/kernel"
	"sluice/sim/simdisk"
)

// Name is the workload's name on the command line.
const Name = "log"

// partitionDir is the log's directory on the simulated disk.
const partitionDir = "topic-0"

// New returns the storage workload.
func New() sim.Workload { return workload{} }

type workload struct{}

func (workload) Name() string { return Name }

// Canaries are the planted bugs this workload must catch, each within
// SeedsMax consecutive seeds from seed 1 (measured; see canary_test.go).
func Canaries() []sim.Canary {
	return []sim.Canary{
		{
			Name:        log.CanarySyncedBeforeDurable,
			Workload:    Name,
			Description: "SyncedOffset advances when a sync is issued, not when it completes",
			SeedsMax:    canarySyncedBeforeDurableSeedsMax,
		},
		{
			Name:        log.CanaryRecoverySkipsCRC,
			Workload:    Name,
			Description: "recovery checks batch framing but not CRCs",
			SeedsMax:    canaryRecoverySkipsCRCSeedsMax,
		},
		{
			Name:        log.CanaryCompactionSwapsUnsynced,
			Workload:    Name,
			Description: "a compaction swap is committed before the new segment is synced",
			SeedsMax:    canaryCompactionSwapsUnsyncedSeedsMax,
		},
		{
			Name:        log.CanaryRestartReusesSegmentName,
			Workload:    Name,
			Description: "a log restarted where one of its segments began creates the new segment before removing the old, which takes its file name",
			SeedsMax:    canaryRestartReusesSegmentNameSeedsMax,
		},
		{
			Name:        log.CanaryAppendBeforeTruncationDurable,
			Workload:    Name,
			Description: "appends are taken after a truncation before a sync made it durable: a crash can line the removed batches up after the new ones",
			SeedsMax:    canaryAppendBeforeTruncationDurableSeedsMax,
		},
		{
			Name:        log.CanaryRestartDropsOldLog,
			Workload:    Name,
			Description: "a restart removes the old segments below its start before a checkpoint records it: a crash in between brings the log back empty at the old start",
			SeedsMax:    canaryRestartDropsOldLogSeedsMax,
		},
		{
			Name:        log.CanaryCompactionTimeIndexLastOffset,
			Workload:    Name,
			Description: "compaction names the batch of a segment's largest timestamp by its last offset, in the time index and what the segment tracks (KAFKA-4497)",
			SeedsMax:    canaryCompactionTimeIndexLastOffsetSeedsMax,
		},
	}
}

// reportPanics turns a panic (an assertion in the log, a bug here) into a
// failed check, so a sweep reports the seed instead of dying. Tests switch
// it off to see the stack.
var reportPanics = true

// violation stops a run: the check that failed and how.
type violation struct {
	check, detail string
}

// run is one seed's simulation.
type run struct {
	kernel *kernel.Kernel
	// recording is kept when the options ask for one (record.go).
	recording *sim.Recording
	rng       *rand.Rand
	settings  settings
	machine   *sim.Machine
	log       *log.Log
	halted    bool
	model     history

	// roundStates[n-1] is the model state when sync round n of the
	// current log instance began (see observe), and openState the state
	// the instance opened in.
	roundStates []int
	openState   int

	// promise is what the last restart promised to keep until a
	// checkpoint records it, nil if nothing (restart_promise.go);
	// cutRounds is the log's RoundsStarted after the last operation that
	// may have cut its files.
	promise   *restartPromise
	cutRounds uint64
	// swapRounds is the log's RoundsStarted after the last compaction
	// step, which may have left swaps for the next round to finish.
	swapRounds uint64

	fullDisk bool
	counts   counts

	// codecs compress the batches of a compression seed and decompress
	// them for the model's checks: the machine's, which the log uses too
	// (pure functions of their input).
	codecs core.Codecs

	// compactedBelow is the highest UpTo compaction was given, lowered by
	// truncations below it: batches at or above it are as appended.
	compactedBelow int64
}

type counts struct {
	appends, appendsRefused, reads, syncs, truncations, restarts, restartsRefused, startMoves, retentions, crashes, halts int
	// fullDiskWindows counts the full-disk windows opened.
	fullDiskWindows int

	compactions, segmentsCompacted, recordsCompacted, tombstonesCompacted int
	// timeLookups counts the checks of lookups by timestamp.
	timeLookups int
}

// Run simulates one seed. It is a pure function of its arguments.
func (workload) Run(seed uint64, options sim.RunOptions) (result sim.Result) {
	trace := kernel.NewTrace(options.Trace)
	k := kernel.NewKernel(seed, trace)
	r := &run{kernel: k, rng: kernel.NewRand(seed, "workload")}
	r.settings = drawSettings(r.rng)
	r.settings.compaction = drawCompactionSettings(seed, &r.settings.config)
	r.settings.compression = drawCompressionSettings(seed)
	r.settings.buggify = sim.DrawBuggifyChances(seed)
	if slices.Contains(options.Canaries, log.CanaryAppendBeforeTruncationDurable) {
		// Lean toward what exposes it (the seed is still what is
		// measured): crashes often, and syncs slow enough for one to
		// land between a truncation and the sync that makes it durable.
		r.settings.crashChance = crashChanceDrawMax
		r.settings.faults.SyncLatencyMin, r.settings.faults.SyncLatencyMax = syncLatencyDrawMax/2, syncLatencyDrawMax
	}
	if slices.Contains(options.Canaries, log.CanaryRestartDropsOldLog) {
		// Lean toward what exposes it: every truncation a restart, and
		// crashes often, so that one lands before a restart's
		// checkpoint.
		r.settings.crashChance = crashChanceDrawMax
		r.settings.restartOneIn = 1
	}
	r.recording = sim.NewRecording(options, Name, []string{nodeName}, nil)
	result = sim.Result{Seed: seed, Options: r.settings.options(), Recording: r.recording}
	defer func() {
		if reportPanics {
			if recovered := recover(); recovered != nil {
				result.Check, result.Detail = "panic", fmt.Sprint(recovered)
			}
		}
		if result.Check != "" {
			r.record(sim.EventViolation, result.Check, nil, result.Check+": "+result.Detail)
		}
		result.TraceHash = trace.Hash()
		result.SimTime = time.Duration(k.Now())
		result.Steps = k.Steps()
		result.Stats = r.stats()
		result.Coverage = r.coverage()
	}()
	if v := r.simulate(options); v != nil {
		result.Check, result.Detail = v.check, v.detail
	}
	return result
}

func (r *run) simulate(options sim.RunOptions) *violation {
	r.machine = sim.NewMachine(r.kernel, nil, nodeName, sim.MachineOptions{
		Disk:     r.settings.faults,
		Buggify:  r.settings.buggify.New(r.kernel.Seed(), nodeName),
		Canaries: core.NewCanaries(options.Canaries...),
		LogLevel: options.LogLevelOr(slog.LevelInfo),
		OnHalt: func(_ *sim.Machine, reason error) {
			r.halted = true
			r.record(sim.EventHalt, "", []string{nodeName}, fmt.Sprintf("%s halted: %v", nodeName, reason))
		},
	})
	r.codecs = r.machine.World().Codecs
	if v := r.open(); v != nil {
		return v
	}
	r.model.reset(r.log.StartOffset(), r.log.EndOffset(), nil)
	r.observe()
	r.recording.StartPhase(r.now(), "safety")
	for range r.settings.operations {
		r.pause()
		if r.halted {
			if v := r.recoverFromCrash(); v != nil {
				return v
			}
		}
		if v := r.operate(); v != nil {
			return v
		}
		r.observe()
		if r.halted {
			if v := r.recoverFromCrash(); v != nil {
				return v
			}
		}
	}
	// Heal and settle: on a good disk the log must sync everything and
	// hold exactly what the model holds. Syncs issued before the heal keep
	// the outcome they drew, so one may still fail and halt.
	r.recording.StartPhase(r.now(), "liveness")
	r.machine.Disk.SetFaults(simdisk.Faults{SyncLatencyMin: r.settings.faults.SyncLatencyMin, SyncLatencyMax: r.settings.faults.SyncLatencyMax})
	r.fullDisk = false
	r.recording.EndOpenFaults(r.now())
	for range healAttemptsMax {
		if r.halted {
			if v := r.recoverFromCrash(); v != nil {
				return v
			}
		}
		r.log.Sync()
		r.kernel.RunUntil(r.kernel.Now() + int64(healWait))
		r.observe()
		if !r.halted && r.log.SyncedOffset() == r.log.EndOffset() {
			if v := r.appendAfterHealing(); v != nil {
				return v
			}
			return r.checkContents("read-mismatch")
		}
	}
	return &violation{"offsets", fmt.Sprintf("after healing, synced %d but end %d", r.log.SyncedOffset(), r.log.EndOffset())}
}

// appendAfterHealing requires the healed log to take an append within
// healAttemptsMax syncs: a fence that nothing lifts (a truncation or a
// restart waiting for a checkpoint no round writes) refuses appends for
// good, which no other check sees.
func (r *run) appendAfterHealing() *violation {
	for range healAttemptsMax {
		before := r.counts.appends
		if v := r.appendBatches(); v != nil {
			return v
		}
		if r.counts.appends > before {
			return nil
		}
		r.log.Sync()
		r.kernel.RunUntil(r.kernel.Now() + int64(healWait))
		r.observe()
		if r.halted {
			if v := r.recoverFromCrash(); v != nil {
				return v
			}
		}
	}
	return &violation{"append-liveness", fmt.Sprintf("after healing, appends are still refused after %d syncs: log [%d, %d)", healAttemptsMax, r.log.StartOffset(), r.log.EndOffset())}
}

// pause lets virtual time pass: mostly a few milliseconds, sometimes
// seconds, so segments age and retention has work.
func (r *run) pause() {
	d := time.Duration(r.rng.Int64N(int64(pauseShortMax)))
	if r.rng.Float64() < pauseLongChance {
		d = time.Duration(r.rng.Int64N(int64(pauseLongMax)))
	}
	r.kernel.RunUntil(r.kernel.Now() + int64(d))
	r.observe()
}

// observe maps sync rounds that began since the last look to the current
// model state: a round begins inside an operation or in a sync completion
// between operations, and either way the log held the current state.
func (r *run) observe() {
	for started := r.log.SyncStats().RoundsStarted; uint64(len(r.roundStates)) < started; {
		r.roundStates = append(r.roundStates, r.model.state)
	}
}

func (r *run) note(text string) {
	r.kernel.Trace().Note(r.kernel.Now(), "workload", text)
}

func (r *run) open() *violation {
	l, err := log.Open(r.machine.World(), partitionDir, r.settings.config)
	if err != nil {
		return &violation{"open-failed", err.Error()}
	}
	r.log = l
	r.notePossibleCut() // recovery may have cut a torn tail
	r.record(sim.EventStart, "", []string{nodeName}, "open the log on "+nodeName)
	r.roundStates = nil // observe maps them once the model holds the recovered state
	return nil
}

// operate performs one operation drawn at random.
func (r *run) operate() *violation {
	if r.rng.Float64() < r.settings.crashChance {
		r.note("crash")
		r.record(sim.EventCrash, "", []string{nodeName}, "crash "+nodeName)
		r.machine.Crash()
		return r.recoverFromCrash()
	}
	if r.rng.Float64() < r.settings.fullDiskChance {
		r.toggleFullDisk()
		return nil
	}
	if r.rng.Float64() < r.settings.syncChance {
		r.counts.syncs++
		r.note("sync")
		r.log.Sync()
		return nil
	}
	if r.settings.compaction.on && r.rng.Float64() < r.settings.compaction.compactChance {
		return r.compact()
	}
	switch p := r.rng.IntN(100); {
	case p < 50:
		return r.appendBatches()
	case p < 85:
		return r.read()
	case p < 88:
		return r.timeLookups()
	case p < 93:
		if r.rng.IntN(r.settings.restartOneIn) == 0 {
			return r.restart()
		}
		if r.settings.compaction.on {
			return r.truncateCompacted()
		}
		return r.truncate()
	case p < 96:
		return r.advanceStart()
	default:
		return r.retention()
	}
}

func (r *run) stats() []sim.Option {
	disk := simdisk.Stats{}
	if r.machine != nil {
		disk = r.machine.Disk.Stats()
	}
	c := r.counts
	return []sim.Option{
		sim.Opt("appends", c.appends),
		sim.Opt("appends_refused", c.appendsRefused),
		sim.Opt("reads", c.reads),
		sim.Opt("time_lookups", c.timeLookups),
		sim.Opt("syncs", c.syncs),
		sim.Opt("truncations", c.truncations),
		sim.Opt("restarts", c.restarts),
		sim.Opt("restarts_refused", c.restartsRefused),
		sim.Opt("start_moves", c.startMoves),
		sim.Opt("retentions", c.retentions),
		sim.Opt("crashes", c.crashes),
		sim.Opt("halts", c.halts),
		sim.Opt("compactions", c.compactions),
		sim.Opt("segments_compacted", c.segmentsCompacted),
		sim.Opt("records_compacted", c.recordsCompacted),
		sim.Opt("tombstones_compacted", c.tombstonesCompacted),
		sim.Opt("reads_corrupted", disk.ReadsCorrupted),
		sim.Opt("syncs_failed", disk.SyncsFailed),
		sim.Opt("crashes_torn", disk.CrashesTorn),
		sim.Opt("writes_torn", disk.WritesTorn),
		sim.Opt("writes_refused_full", disk.WritesRefusedFull),
	}
}
