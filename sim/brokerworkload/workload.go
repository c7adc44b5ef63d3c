package brokerworkload

import (
	"fmt"
	"log/slog"
	"time"

	"sluice/core"
	"sluice/jepsen/history"
	"sluice/node/codecs"
	"sluice/sim"
	"sluice/sim/kernel"
	"sluice/sim/simclient"
	"sluice/sim/simnet"
)

// Name is the workload's name on the command line.
const Name = "broker"

// topicName is the one topic every run writes.
const topicName = "sluice-sim"

// Bounds of a run's phases, in virtual time.
const (
	// setupMax bounds the wait for the topic to exist with a leader for
	// every partition.
	setupMax = 10 * time.Second
	// livenessMax bounds the liveness phase: from the end of the faults
	// to every producer finished and every partition drained. Delivery
	// and request timeouts are at most a few seconds, restarts take
	// milliseconds; anything past this is a system that does not
	// converge.
	livenessMax = 30 * time.Second
	// settleDelay is the pause between the producers finishing and the
	// drain starting: the syncs of the last acks=1 appends complete, so
	// the drain's high watermarks cover them unless a crash took them.
	settleDelay = time.Second
)

// New returns the broker workload.
func New() sim.Workload { return workload{} }

type workload struct{}

func (workload) Name() string { return Name }

// reportPanics turns a panic (an assertion in core, a bug here) into a
// failed check, so a sweep reports the seed instead of dying. Tests switch
// it off to see the stack.
var reportPanics = true

// violation stops a run: the check that failed and how.
type violation struct {
	check, detail string
}

// run is one seed's simulation.
type run struct {
	kernel      *kernel.Kernel
	logLevel    slog.Level // what core logs to the trace
	searchSteps int        // the checker's search budget (sim.RunOptions), zero for its default
	rng         random     // the workload's choices: think times
	nemesisRand random     // the nemesis's choices
	settings    settings
	network     *simnet.Network
	node        *node
	recorder    *history.Recorder
	processes   *simclient.Processes
	codecs      core.Codecs // shared by the node and the clients

	producers []*producerDriver
	readers   []*simclient.Reader
	consumers []*consumerDriver
	// clients are the producers', readers' and group consumers' clients,
	// which the nemesis may crash.
	clients []*simclient.Client
	drainer *simclient.Reader

	stopSending   bool  // the liveness phase began: no new sends
	faultsStopped bool  // the nemesis is done
	burstUntil    int64 // producers skip their think time until then
	diskFullUntil int64
	diskSlowUntil int64

	counts counts
	report string // the checker's summary line
	// slowLinks is the seed's draw of slow links (slow_net.go).
	slowLinks sim.SlowLinks

	// recording is kept when the options ask for one (record.go).
	recording *sim.Recording
}

type counts struct {
	resets, clientCrashes, fullDiskWindows, slowDiskWindows int
	consumerLeaves, consumerStalls, crashesInRebalance      int
	lossPermitted, slowLinks                                int
}

// Run simulates one seed. It is a pure function of its arguments (the
// checker's linearizability searches included: their budget is counted in
// steps, and one that runs out is reported as "inconclusive", never as a
// pass).
func (workload) Run(seed uint64, options sim.RunOptions) sim.Result {
	result, _ := runSeed(seed, options, nil)
	return result
}

// runSeed is Run, with a hook for tests to adjust the drawn settings, and
// the run itself for tests to inspect.
func runSeed(seed uint64, options sim.RunOptions, adjust func(*settings)) (result sim.Result, r *run) {
	trace := kernel.NewTrace(options.Trace)
	k := kernel.NewKernel(seed, trace)
	r = &run{
		kernel:      k,
		rng:         kernel.NewRand(seed, "workload"),
		nemesisRand: kernel.NewRand(seed, "nemesis"),
		processes:   &simclient.Processes{},
		codecs:      codecs.New(),
		logLevel:    options.LogLevelOr(slog.LevelInfo),
		searchSteps: options.SearchSteps,
	}
	r.settings = drawSettings(kernel.NewRand(seed, "settings"))
	r.slowLinks = sim.DrawSlowLinks(seed)
	drawBatching(kernel.NewRand(seed, "batching-settings"), r.settings.producers)
	r.settings.buggify = sim.DrawBuggifyChances(seed)
	if adjust != nil {
		adjust(&r.settings)
	}
	r.recorder = history.NewRecorder(k.Now)
	r.recording = newRecording(r, options)
	result = sim.Result{Seed: seed, Options: append(r.settings.options(), sim.Opt("slow_net_every", meanText(r.slowLinks.Mean))), Recording: r.recording}
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
	if v := r.simulate(options); v != nil {
		result.Check, result.Detail = v.check, v.detail
		r.record(sim.EventViolation, v.check, nil, v.check+": "+v.detail)
	}
	return result, r
}

func (r *run) simulate(options sim.RunOptions) *violation {
	r.network = simnet.New(r.kernel, kernel.NewRand(r.kernel.Seed(), "network"), r.settings.network)
	r.node = newNode(r, core.NewCanaries(options.Canaries...))
	r.node.start()
	if !r.node.up {
		return &violation{"broker-start", fmt.Sprintf("the broker did not start on an empty disk: %v", r.node.lastStartError)}
	}
	if v := r.createTopic(); v != nil {
		return v
	}
	r.recording.StartPhase(r.now(), "safety")
	r.startClients()
	r.startGroup()
	r.startNemesis()
	r.startSlowLinks()
	r.startGroupNemesis()
	r.kernel.RunUntil(r.kernel.Now() + int64(r.settings.safety))
	if v := r.converge(); v != nil {
		return v
	}
	if v := r.check(); v != nil {
		return v
	}
	return r.checkGroupSawEverything()
}

func (r *run) note(text string) { r.kernel.Trace().Note(r.kernel.Now(), "workload", text) }

// createTopic has a client ask for the topic's metadata with automatic
// creation on, until every partition has a leader.
func (r *run) createTopic() *violation {
	c := r.newClient("setup")
	c.WantTopic(topicName)
	ready := false
	var ask func()
	ask = func() {
		c.RefreshMetadata(func(error) {
			ready = c.Partitions(topicName) == r.settings.partitions
			for p := range int32(r.settings.partitions) {
				if _, _, err := c.Leader(history.TopicPartition{Topic: topicName, Partition: p}); err != nil {
					ready = false
				}
			}
			if !ready {
				ask()
			}
		})
	}
	ask()
	if !r.kernel.RunWhile(r.kernel.Now()+int64(setupMax), func() bool { return !ready }) {
		return &violation{"setup", fmt.Sprintf("topic %s with %d partitions not ready within %v", topicName, r.settings.partitions, setupMax)}
	}
	c.Crash() // its job is done; a crash is the quickest way to leave
	return nil
}
