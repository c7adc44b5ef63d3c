package clusterworkload

import (
	"fmt"
	"log/slog"
	"time"

	"sluice/core"
	"sluice/jepsen/checker"
	"sluice/jepsen/history"
	"sluice/node/codecs"
	"sluice/sim"
	"sluice/sim/kernel"
	"sluice/sim/scenario"
	"sluice/sim/simclient"
	"sluice/sim/simdisk"
	"sluice/sim/simnet"
)

// Name is the workload's name on the command line.
const Name = "cluster"

// Bounds of the run's phases, in virtual time.
const (
	// setupMax bounds the wait for the cluster to elect a controller,
	// register its brokers and create every topic with a leader for
	// each partition.
	setupMax = 30 * time.Second
	// adminTimeout bounds one admin request.
	adminTimeout = 2 * time.Second
	// adminRetryDelay is the pause before an admin request is tried
	// again.
	adminRetryDelay = 100 * time.Millisecond
)

// New returns the cluster workload.
func New() sim.Workload { return workload{} }

type workload struct{}

func (workload) Name() string { return Name }

// Run simulates the scenario the seed draws (leaning toward the faults
// that expose the planted bugs switched on, see bias.go, or toward the
// profile asked for, see profiles.go).
func (workload) Run(seed uint64, options sim.RunOptions) sim.Result {
	return RunScenario(drawn(seed, options.Canaries, options.Profile), options)
}

// RunScenario simulates one scenario: a pure function of its arguments
// (the checker's linearizability searches included: their budget is
// counted in steps, and one that runs out is reported as "inconclusive",
// never as a pass). The scenario's canaries are switched on with the
// options'.
func RunScenario(s scenario.Scenario, options sim.RunOptions) sim.Result {
	result, _ := runScenario(s, options)
	return result
}

// reportPanics turns a panic (an assertion in core, a bug here) into the
// failed check "panic", so a sweep reports the seed instead of dying.
// Tests switch it off to see the stack.
var reportPanics = true

// random is the part of a kernel.NewRand stream the workload draws from:
// a seeded stream, never global randomness.
type random interface {
	IntN(n int) int
	Int64N(n int64) int64
	Float64() float64
}

// violation is a failed check and how it failed.
type violation struct{ check, detail string }

// run is one scenario's simulation.
type run struct {
	scenario scenario.Scenario
	kernel   *kernel.Kernel
	// logLevel is what core logs to the trace.
	logLevel slog.Level
	// searchSteps is the checker's search budget (sim.RunOptions), zero
	// for its default.
	searchSteps int
	// rng is the workload's own choices (think times); the nemesis
	// draws from a stream of its own.
	rng       random
	network   *simnet.Network
	nodes     []*node
	observer  *observer
	nemesis   *nemesis
	admin     *admin
	recorder  *history.Recorder
	processes *simclient.Processes
	// codecs are the run's compression codecs, shared by its machines
	// and clients.
	codecs core.Codecs

	producers []*producerDriver
	readers   []*readerDriver
	groups    []*groupDriver
	// offsetReaders are the groups' lag monitors (offset_reader.go).
	offsetReaders []*offsetReaderDriver
	// growths are the topics the run grows (growth.go).
	growths []*growth
	// recreations are the operators of the topics deleted and created
	// again (recreates.go).
	recreations []*recreation
	// alterers are the operators of the topics whose configs change
	// (alters.go).
	alterers []*alterer
	// electors are the operators running leader elections
	// (elections.go).
	electors []*elector
	// reassigners are the operators reassigning partitions
	// (reassigns.go).
	reassigners []*reassigner
	// deletions are the DeleteRecords a leader answered (deletes.go),
	// for the checker's deleted-records-served.
	deletions []checker.DeleteAnswered
	// clients are every client machine, in the order the scenario names
	// them; the nemesis crashes them.
	clients []*simclient.Client
	drainer *simclient.Reader

	// replicas are each partition's replica set, from the metadata at
	// setup, by partition.
	replicas map[history.TopicPartition][]int32
	// replicaLook is the latest look at every replica's log (replicas.go).
	replicaLook replicaLook

	stopSending bool
	// violation is the first check that failed.
	violation *violation
	counts    counts
	// checkSummary is the checker's report, for the trace.
	checkSummary string
	// recording is what a report draws; nil unless asked for (record.go).
	recording *sim.Recording
}

type counts struct {
	quorumLeaderships, partitionLeaderships int
	lossPermitted                           int
	faults                                  map[scenario.Kind]int
	replicasCompared, batchesCompared       int
	livenessTime                            time.Duration
	// operationsWait is how long the safety phase ran on past Safety,
	// waiting for the scenario's floor of operations.
	operationsWait time.Duration
	// drainsAgain counts the final drain's extra rounds (final_drain.go).
	drainsAgain int
	// deletesSent counts the operator's DeleteRecords rounds.
	deletesSent int
	// The quorum members' metadata snapshots (observer.snapshotLine).
	metadataSnapshotsTaken, metadataSnapshotDownloads, metadataSnapshotsRestored int
	// compactions counts the compaction steps that removed records, of
	// any replica (__consumer_offsets is compacted).
	compactions int
	// uncleanElections counts the leaders a controller chose outside the
	// ISR (the observer sees its warning; one whose record a deposed
	// controller never committed counts too).
	uncleanElections int
	// reassignmentsCompleted counts the partition reassignments a
	// controller completed (its log says so when it proposes one).
	reassignmentsCompleted int
	// leadersRebalanced counts the leaderships a controller's automatic
	// rebalancing proposed to move back to preferred replicas.
	leadersRebalanced int
}

func runScenario(s scenario.Scenario, options sim.RunOptions) (result sim.Result, r *run) {
	if err := s.Validate(); err != nil {
		return sim.Result{Seed: s.Seed, Check: "scenario", Detail: err.Error()}, nil
	}
	trace := kernel.NewTrace(options.Trace)
	k := kernel.NewKernel(s.Seed, trace)
	r = &run{
		scenario:    s,
		kernel:      k,
		logLevel:    options.LogLevelOr(traceLogLevel),
		searchSteps: options.SearchSteps,
		rng:         kernel.NewRand(s.Seed, "workload"),
		recorder:    history.NewRecorder(k.Now),
		processes:   &simclient.Processes{},
		codecs:      codecs.New(),
		replicas:    map[history.TopicPartition][]int32{},
		counts:      counts{faults: map[scenario.Kind]int{}},
	}
	r.observer = newObserver(r)
	r.recording = newRecording(r, options)
	result = sim.Result{Seed: s.Seed, Options: s.Options(), Recording: r.recording}
	defer func() {
		if reportPanics {
			if recovered := recover(); recovered != nil {
				result.Check, result.Detail = "panic", fmt.Sprint(recovered)
			}
		}
		result.TraceHash = trace.Hash()
		result.SimTime = time.Duration(k.Now())
		result.Steps = k.Steps()
		result.Stats = r.stats()
		result.Coverage = r.coverage()
	}()
	canaries := append(append([]string{}, options.Canaries...), s.Canaries...)
	r.simulate(core.NewCanaries(canaries...))
	if r.violation != nil {
		result.Check, result.Detail = r.violation.check, r.violation.detail
	}
	return result, r
}

// fail records the first violation; the run stops at its next look.
func (r *run) fail(check, detail string) {
	if r.violation == nil {
		r.violation = &violation{check, detail}
		r.note("violation: " + check + ": " + detail)
		r.record(sim.EventViolation, check, nil, check+": "+detail)
	}
}

func (r *run) note(text string) { r.kernel.Trace().Note(r.kernel.Now(), "workload", text) }

// runStepsMax bounds the events one run may take. A healthy run takes a
// few tens of thousands; a node that reschedules itself without letting
// virtual time pass would otherwise spin until the kernel's own bound,
// tens of seconds of wall time later.
const runStepsMax = 3_000_000

// runWhile runs the simulation while cond holds, until limit; it stops
// early at a violation, or when the run exceeds runStepsMax events (check
// "livelock"). It reports whether cond became false.
func (r *run) runWhile(limit int64, cond func() bool) bool {
	return r.kernel.RunWhile(limit, func() bool {
		if r.kernel.Steps() > runStepsMax && r.violation == nil {
			r.fail("livelock", fmt.Sprintf("more than %d events by %v: nodes:%s", runStepsMax, time.Duration(r.kernel.Now()), r.describeNodes()))
		}
		return r.violation == nil && cond()
	})
}

// waitForOperations runs the safety phase on, with no new faults, until
// the clients have made the scenario's floor of operations: a run whose
// faults held its clients on timeouts would otherwise check too little.
// Each operation is two history entries, its invocation and completion;
// counting entries keeps the condition cheap, as it is tested after
// every event.
func (r *run) waitForOperations() {
	entries := 2 * r.scenario.Operations
	if r.violation != nil || r.recorder.Len() >= entries {
		return
	}
	r.note(fmt.Sprintf("safety phase runs on: %d of %d history entries", r.recorder.Len(), entries))
	start := r.kernel.Now()
	r.runWhile(start+int64(scenario.OperationsWaitMax), func() bool { return r.recorder.Len() < entries })
	r.counts.operationsWait = time.Duration(r.kernel.Now() - start)
}

// baseDisk is every disk's faults when no fault event changes them.
func (r *run) baseDisk() simdisk.Faults {
	d := r.scenario.Disk
	return simdisk.Faults{
		SyncLatencyMin: d.SyncLatencyMin,
		SyncLatencyMax: d.SyncLatencyMax,
		TornWrite:      d.TornWrite,
		ReadCorruption: d.ReadCorruption,
		SyncFailure:    d.SyncFailure,
	}
}

func (r *run) simulate(canaries *core.Canaries) {
	s := r.scenario
	r.network = simnet.New(r.kernel, kernel.NewRand(s.Seed, "network"), simnet.Faults{
		LatencyMin: s.Network.LatencyMin,
		LatencyMax: s.Network.LatencyMax,
	})
	r.admin = newAdmin(r.kernel, r.network, adminTimeout)
	for id := 1; id <= s.Cluster.Nodes; id++ {
		r.nodes = append(r.nodes, newNode(r, id, canaries))
	}
	r.nemesis = newNemesis(r)
	for _, n := range r.nodes {
		n.start()
	}
	if !r.setUp() {
		return
	}
	r.note("safety phase")
	r.recordPhase("safety")
	r.startClients()
	r.nemesis.start(r.kernel.Now())
	r.startGrowth(r.kernel.Now())
	r.startDeletes()
	r.startRecreates()
	r.startAlters()
	r.startElections()
	r.startReassignments()
	r.runWhile(r.kernel.Now()+int64(s.Safety), func() bool { return true })
	r.waitForOperations()
	if r.violation != nil {
		return
	}
	r.note("liveness phase")
	r.recordPhase("liveness")
	start := r.kernel.Now()
	converged := r.converge()
	r.counts.livenessTime = time.Duration(r.kernel.Now() - start)
	if r.violation != nil && !converged {
		// A liveness failure: what the history shows may explain it,
		// and a safety violation matters more.
		liveness := *r.violation
		r.violation = nil
		r.checkHistory(false)
		if r.violation == nil {
			r.violation = &liveness
		}
		return
	}
	if r.violation != nil {
		return
	}
	r.checkHistory(true)
	if r.violation == nil {
		r.checkGroupSawEverything()
	}
	if r.violation == nil {
		r.checkReplicasAgree()
	}
	if r.violation == nil {
		r.checkRecreatedTopics()
	}
	if r.violation == nil && r.counts.quorumLeaderships == 0 {
		r.fail("observer", "no node ever logged that it leads the metadata quorum: the observer's log lines changed")
	}
}

// nodeAddresses lists every node's client address, the clients' bootstrap.
func (r *run) nodeAddresses() []string {
	var addresses []string
	for _, n := range r.nodes {
		addresses = append(addresses, clientAddress(n.id))
	}
	return addresses
}
