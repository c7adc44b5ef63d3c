package logworkload

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"slices"
	"strconv"
	"time"

	"sluice/core"
	"sluice/core/batch"
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

func (r *run) toggleFullDisk() {
	faults := r.machine.Disk.Faults()
	r.fullDisk = !r.fullDisk
	faults.CapacityBytes = 0
	if r.fullDisk {
		r.counts.fullDiskWindows++
		faults.CapacityBytes = r.machine.Disk.Usage() + r.rng.Int64N(fullDiskHeadroomMax)
	}
	r.machine.Disk.SetFaults(faults)
	r.note("capacity " + strconv.FormatInt(faults.CapacityBytes, 10))
	if r.fullDisk {
		r.recording.FaultStart(r.now(), "full-disk-"+nodeName, []string{nodeName}, "disk full at "+strconv.FormatInt(faults.CapacityBytes, 10)+" bytes")
	} else {
		r.recording.FaultEnd(r.now(), "full-disk-"+nodeName)
	}
}

// randomBatches builds one to a few batches with random records.
func (r *run) randomBatches(firstOffset int64, epoch int32, stamped bool) []byte {
	var all []byte
	offset := firstOffset
	now := r.machine.Clock.Now().UnixMilli()
	for range 1 + r.rng.IntN(batchesPerAppendMax) {
		spec := batch.Spec{
			BaseTimestamp: now + r.rng.Int64N(2*timestampSkewMax+1) - timestampSkewMax,
			ProducerID:    batch.NoProducerID,
		}
		for i := range 1 + r.rng.IntN(recordsPerBatchMax) {
			value := randomBytes(r.rng.Uint64(), r.rng.IntN(recordValueBytesMax+1))
			record := batch.Record{Value: value, TimestampDelta: int64(i)}
			if r.settings.compaction.on {
				r.settings.compaction.keyRecord(r.rng, &record)
			}
			spec.Records = append(spec.Records, record)
		}
		if stamped {
			spec.BaseOffset, spec.LeaderEpoch = offset, epoch
		}
		offset += int64(len(spec.Records))
		all = append(all, r.settings.compression.maybeCompress(r.rng, r.codecs, batch.Build(spec))...)
	}
	return all
}

func (r *run) appendBatches() *violation {
	epoch := max(r.log.LatestEpoch(), 0)
	if r.rng.Float64() < epochBumpChance {
		epoch++
	}
	replicated := r.rng.Float64() < replicatedAppendChance
	batches := r.randomBatches(r.model.end, epoch, replicated)
	var info log.AppendInfo
	var err error
	if replicated {
		info, err = r.log.AppendReplicated(batches)
	} else {
		info, err = r.log.Append(batches, epoch)
	}
	if errors.Is(err, log.ErrTruncationNotDurable) || errors.Is(err, core.ErrDiskFull) || errors.Is(err, log.ErrHalted) {
		r.counts.appendsRefused++
		r.note("append refused: " + err.Error())
		r.notePossibleCut() // a partial write is cut back
		return nil
	}
	if err != nil {
		return &violation{"offsets", "append failed: " + err.Error()}
	}
	if info.FirstOffset != r.model.end {
		return &violation{"offsets", fmt.Sprintf("append got offset %d, the log ended at %d", info.FirstOffset, r.model.end)}
	}
	r.counts.appends++
	r.model.next()
	for s := (batch.Scanner{Buf: batches}); s.Next(); {
		r.model.appendBatch(s.Batch())
	}
	if info.LastOffset != r.model.end-1 || r.log.EndOffset() != r.model.end {
		return &violation{"offsets", fmt.Sprintf("append of [%d, %d] left the end at %d, model %d", info.FirstOffset, info.LastOffset, r.log.EndOffset(), r.model.end)}
	}
	r.note("append " + strconv.FormatInt(info.FirstOffset, 10) + "-" + strconv.FormatInt(info.LastOffset, 10))
	return nil
}

func (r *run) read() *violation {
	r.counts.reads++
	m := &r.model
	offset := m.start - 1 + r.rng.Int64N(m.end-m.start+3)
	maxOffset := m.end
	if r.rng.IntN(4) == 0 {
		maxOffset = offset + r.rng.Int64N(m.end-offset+2)
	}
	maxBytes := r.rng.IntN(readMaxBytesMax)
	atLeastOne := r.rng.IntN(4) != 0
	got, err := r.log.Read(offset, maxOffset, maxBytes, atLeastOne)
	if offset < m.start || offset > m.end {
		if !errors.Is(err, log.ErrOffsetOutOfRange) {
			return &violation{"read-mismatch", fmt.Sprintf("Read(%d) outside [%d, %d] returned %v", offset, m.start, m.end, err)}
		}
		return nil
	}
	if err != nil {
		return &violation{"read-failed", fmt.Sprintf("Read(%d): %v", offset, err)}
	}
	if offset == m.end || offset >= maxOffset {
		if len(got) != 0 {
			return &violation{"read-mismatch", fmt.Sprintf("Read(%d, max offset %d) returned %d bytes", offset, maxOffset, len(got))}
		}
		return nil
	}
	if r.settings.compaction.on {
		return r.checkReadCompacted(offset, maxOffset, maxBytes, atLeastOne, got)
	}
	return r.checkRead(offset, maxOffset, maxBytes, atLeastOne, got)
}

// checkRead compares a read's bytes with the model's batches.
func (r *run) checkRead(offset, maxOffset int64, maxBytes int, atLeastOne bool, got []byte) *violation {
	m := &r.model
	i := m.holding(offset)
	s := batch.Scanner{Buf: got, VerifyCRC: true}
	count := 0
	for ; s.Next(); count++ {
		if i+count >= len(m.batches) {
			return &violation{"read-mismatch", fmt.Sprintf("Read(%d) returned more batches than the log holds", offset)}
		}
		want := m.batches[i+count]
		if !bytes.Equal(s.Batch(), want.bytes) {
			return &violation{"read-mismatch", fmt.Sprintf("Read(%d) batch %d differs from the one stored at %d", offset, count, want.base)}
		}
		if want.base >= maxOffset {
			return &violation{"read-mismatch", fmt.Sprintf("Read(%d, max offset %d) returned the batch at %d", offset, maxOffset, want.base)}
		}
	}
	if s.Err() != nil {
		check := "read-mismatch"
		if errors.Is(s.Err(), batch.ErrCRC) {
			check = "corrupt-served"
		}
		return &violation{check, fmt.Sprintf("Read(%d) returned bad bytes: %v", offset, s.Err())}
	}
	if len(got) > maxBytes && !(atLeastOne && count == 1) {
		return &violation{"read-mismatch", fmt.Sprintf("Read(%d) returned %d bytes, max %d", offset, len(got), maxBytes)}
	}
	if count == 0 && (atLeastOne || len(m.batches[i].bytes) <= maxBytes) {
		return &violation{"read-mismatch", fmt.Sprintf("Read(%d) returned nothing", offset)}
	}
	return nil
}

func (r *run) truncate() *violation {
	m := &r.model
	offset := m.start + r.rng.Int64N(m.end-m.start+1)
	r.note("truncate " + strconv.FormatInt(offset, 10))
	if offset < m.end {
		// A cut voids the last restart's promise, even one that halts
		// the log half done.
		r.promise = nil
	}
	if err := r.log.TruncateTo(offset); err != nil {
		if r.halted {
			return nil
		}
		return &violation{"offsets", fmt.Sprintf("TruncateTo(%d): %v", offset, err)}
	}
	if offset >= m.end {
		return nil
	}
	r.counts.truncations++
	r.notePossibleCut()
	m.next()
	m.truncate(offset)
	if r.log.EndOffset() != m.end || r.log.StartOffset() != m.start {
		return &violation{"offsets", fmt.Sprintf("after TruncateTo(%d) the log is [%d, %d), model [%d, %d)", offset, r.log.StartOffset(), r.log.EndOffset(), m.start, m.end)}
	}
	return nil
}

// restart empties the log and starts it again at an offset
// (TruncateFullyAndStartAt), as a follower does when its leader's log
// starts past its end, or when it must cut below its own log start after
// an unclean election: half the time where one of its batches begins,
// often a live segment's base, whose file name the new segment takes;
// otherwise anywhere up to a little past the end. In a compaction seed
// only at or above what compaction may have used, as its truncations.
func (r *run) restart() *violation {
	m := &r.model
	low := int64(0)
	if r.settings.compaction.on {
		low = min(r.compactedBelow, m.end)
	}
	offset := low + r.rng.Int64N(m.end+restartBeyondEndMax+1-low)
	if above := m.batchesFrom(low); len(above) > 0 && r.rng.IntN(2) == 0 {
		offset = above[r.rng.IntN(len(above))].base
	}
	r.note("restart at " + strconv.FormatInt(offset, 10))
	promise, earlier := r.promiseAtRestart(offset), r.promise
	// An earlier restart's promise is void from here, even if this one
	// halts the log half done: this one may cut what that one kept.
	r.promise = nil
	if err := r.log.TruncateFullyAndStartAt(offset); err != nil {
		if r.halted {
			return nil
		}
		refused := errors.Is(err, log.ErrTruncationNotDurable) && r.mayRefuseRestart() ||
			errors.Is(err, log.ErrSwapNotFinished) && r.maySwapBeUnfinished()
		if refused {
			// Refused before it touched anything: the earlier promise
			// stands.
			if errors.Is(err, log.ErrSwapNotFinished) {
				r.note("restart refused: a compaction swap is not finished")
			} else {
				r.note("restart refused: a cut is not yet durable")
			}
			r.counts.restartsRefused++
			r.promise = earlier
			return nil
		}
		return &violation{"offsets", fmt.Sprintf("TruncateFullyAndStartAt(%d): %v", offset, err)}
	}
	r.counts.restarts++
	r.notePossibleCut()
	r.promise = promise
	m.next()
	m.restart(offset)
	if r.log.StartOffset() != offset || r.log.EndOffset() != offset {
		return &violation{"offsets", fmt.Sprintf("after TruncateFullyAndStartAt(%d) the log is [%d, %d)", offset, r.log.StartOffset(), r.log.EndOffset())}
	}
	return nil
}

// restartBeyondEndMax is how far past the end a restart may start the log.
const restartBeyondEndMax = 50

func (r *run) advanceStart() *violation {
	m := &r.model
	// Mostly small steps: DeleteRecords trims the front, not the whole log.
	offset := m.start + r.rng.Int64N((m.end-m.start)/4+1)
	r.note("advance start " + strconv.FormatInt(offset, 10))
	if err := r.log.AdvanceStartOffset(offset); err != nil {
		return &violation{"offsets", fmt.Sprintf("AdvanceStartOffset(%d): %v", offset, err)}
	}
	if offset > m.start {
		r.counts.startMoves++
		m.next()
		m.advanceStart(offset)
	}
	return nil
}

func (r *run) retention() *violation {
	r.counts.retentions++
	deleted := r.log.ApplyRetention(r.log.EndOffset())
	start := r.log.StartOffset()
	r.note("retention " + strconv.Itoa(deleted) + " start " + strconv.FormatInt(start, 10))
	m := &r.model
	if start < m.start || start > m.end {
		return &violation{"offsets", fmt.Sprintf("retention moved the start from %d to %d (end %d)", m.start, start, m.end)}
	}
	if start != m.start {
		// A segment starts at a batch, or, once compaction removed
		// that batch, in the gap it left.
		i := m.holding(start)
		inGap := i < 0 && r.settings.compaction.on
		if start != m.end && !inGap && (i < 0 || m.batches[i].base != start) {
			return &violation{"offsets", fmt.Sprintf("retention moved the start to %d, inside a batch", start)}
		}
		if v := r.checkRetentionEarned(start); v != nil {
			return v
		}
		m.next()
		m.advanceStart(start)
	}
	return nil
}

// checkRetentionEarned checks, before the model follows it, that a move of
// the start to start by retention was earned ("retention-too-eager"). The
// last segment removed, which ends at start, went because the log without
// it still held retention.bytes, or because its largest timestamp was
// older than retention.ms; its last batch is the last below start, whose
// timestamp is at most the segment's. Without compaction the log from
// start on is the model's batches from start on, byte for byte.
func (r *run) checkRetentionEarned(start int64) *violation {
	if r.settings.compaction.on {
		return nil // sizes on disk are no longer the batches appended
	}
	m := &r.model
	config := r.settings.config
	remaining := int64(0)
	var lastRemoved *modelBatch
	for i := range m.batches {
		switch b := &m.batches[i]; {
		case b.base >= start:
			remaining += int64(len(b.bytes))
		case b.last >= m.start:
			lastRemoved = b
		}
	}
	if lastRemoved == nil || config.RetentionBytes != log.Unlimited && remaining >= config.RetentionBytes {
		return nil
	}
	h, _ := batch.Parse(lastRemoved.bytes)
	age := r.machine.Clock.Now().UnixMilli() - h.MaxTimestamp
	if config.RetentionAge != log.Unlimited && age > config.RetentionAge.Milliseconds() {
		return nil
	}
	return &violation{"retention-too-eager", fmt.Sprintf("retention moved the start from %d to %d, leaving %d bytes (retention.bytes %d), and the batch at %d below it is %d ms old (retention.ms %d)",
		m.start, start, remaining, config.RetentionBytes, lastRemoved.base, age, config.RetentionAge.Milliseconds())}
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

// randomBytes returns n bytes of xorshift output from seed: as good as the
// run's PRNG for telling batches apart, at a fraction of its cost.
func randomBytes(seed uint64, n int) []byte {
	b := make([]byte, n)
	x := seed | 1
	for i := 0; i < n; i += 8 {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		var word [8]byte
		binary.LittleEndian.PutUint64(word[:], x)
		copy(b[i:], word[:])
	}
	return b
}
