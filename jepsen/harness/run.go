package harness

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"sluice/jepsen/checker"
	"sluice/jepsen/history"
)

// Config is one run of the harness.
type Config struct {
	// Binary is the sluice binary the nodes run.
	Binary string
	// Nodes is the cluster's size.
	Nodes int
	// FaultPhase is how long the nemesis injects faults while the
	// workload runs.
	FaultPhase time.Duration
	// Faults are the kinds the nemesis injects, each once per round.
	Faults []FaultKind
	Timing NemesisTiming
	// Seed decides the nemesis's choices (targets, durations, shapes).
	// The cluster's own timing is not reproducible; the fault sequence
	// is, given the same cluster behaviour.
	Seed uint64
	// Dir is the results folder, created if needed.
	Dir      string
	Workload Workload
	// Settings are extra Kafka broker settings for every node.
	Settings []string
	// Progress receives a line per event and every progressInterval;
	// nil discards them.
	Progress io.Writer
}

// DefaultTiming is the fault rhythm of a full run: faults of 4 to 10 s,
// 5 s of calm between them.
func DefaultTiming() NemesisTiming {
	return NemesisTiming{HoldMin: 4 * time.Second, HoldMax: 10 * time.Second, Quiet: 5 * time.Second, FullKillDowntime: 2 * time.Second}
}

// Result is what a run found. Pass is the verdict: the checkers found no
// failure, no node died on its own, the cluster recovered, the final read
// reached every partition's end and writes were acknowledged again after
// recovery.
type Result struct {
	Dir    string
	Config Config
	Report checker.Report
	Faults []FaultWindow
	// UnexpectedExits are nodes that died without the nemesis.
	UnexpectedExits []NodeExit
	// Problems are the run's failures outside the report.
	Problems []string
	// Phases are the timings of the run's phases.
	Phases []Phase
	// Stats count what the history holds.
	Stats HistoryStats
	// DeletesSent and DeletesAnswered count the operator's
	// DeleteRecords (Workload.DeleteEvery), and those a leader answered.
	DeletesSent, DeletesAnswered int64
	// The operator recreating its topic (Workload.RecreateEvery):
	// incarnations created after the first, values written, those
	// acknowledged, and those read back by topic id.
	Recreated, RecreatedWrites, RecreatedAcked, RecreatedConfirmed int
	// RecreatedCopiesRead counts the nodes' copies of incarnations read
	// on disk while they were current.
	RecreatedCopiesRead int64
	// ElectionsSent and Elected count the operator's preferred leader
	// elections (Workload.ElectEvery) and the partitions they moved.
	ElectionsSent, Elected int64
	// UncleanSent and UncleanConfirmed count the operator's changes of
	// unclean.leader.election.enable (Workload.AlterEvery);
	// UncleanElected are the partitions a controller then elected a
	// leader of outside the ISR.
	UncleanSent, UncleanConfirmed int64
	UncleanElected                []int32
	// ReassignmentsSent counts the operator's AlterPartitionReassignments
	// (Workload.ReassignEvery); ReassignmentsConfirmed the targets and
	// ReassignmentsCancelled the cancellations a controller accepted;
	// ReassignmentsRefused those it refused as Kafka does (nothing to
	// cancel, or only the new members in sync).
	ReassignmentsSent, ReassignmentsConfirmed    int64
	ReassignmentsCancelled, ReassignmentsRefused int64
	// ChurnJoined counts the members the churning operator added to the
	// group (Workload.ChurnEvery), ChurnLeft those that left it and
	// ChurnCrashed those that crashed (Workload.ChurnExit).
	ChurnJoined, ChurnLeft, ChurnCrashed int64
	Pass                                 bool
}

// drainPhaseName names the final read among a run's phases.
const drainPhaseName = "read every partition to its end"

// Phase is one step of a run and how long it took.
type Phase struct {
	Name     string
	Start    time.Duration
	Duration time.Duration
}

// Run starts a cluster, runs the workload under the nemesis, heals,
// waits for recovery, reads everything back, judges the history and
// writes the results folder. An error means the run could not be carried
// out at all (no cluster, no folder); what the run found is in Result.
func Run(ctx context.Context, config Config) (*Result, error) {
	if err := config.validate(); err != nil {
		return nil, err
	}
	progress := config.Progress
	if progress == nil {
		progress = io.Discard
	}
	if err := os.MkdirAll(config.Dir, 0o755); err != nil {
		return nil, fmt.Errorf("harness: results folder: %w", err)
	}
	r := &runner{config: config, result: &Result{Dir: config.Dir, Config: config}, progress: progress, start: time.Now()}
	r.log = newHistoryLog(r.start)
	err := r.run(ctx)
	if writeErr := writeResults(r.result, r.log.ops()); writeErr != nil {
		err = errors.Join(err, writeErr)
	}
	return r.result, err
}

func (c Config) validate() error {
	switch {
	case c.Binary == "":
		return errors.New("harness: no sluice binary")
	case c.Nodes < 1 || c.Nodes > clusterNodesMax:
		return fmt.Errorf("harness: %d nodes: between 1 and %d", c.Nodes, clusterNodesMax)
	case c.FaultPhase < 0 || c.FaultPhase > faultPhaseMax:
		return fmt.Errorf("harness: fault phase %v: between 0 and %v", c.FaultPhase, faultPhaseMax)
	case c.Timing.HoldMin <= 0 || c.Timing.HoldMax < c.Timing.HoldMin || c.Timing.Quiet < 0:
		return fmt.Errorf("harness: fault timing %+v: holds must be positive and ordered", c.Timing)
	case c.Dir == "":
		return errors.New("harness: no results folder")
	}
	if err := c.Workload.validate(c.Nodes); err != nil {
		return fmt.Errorf("harness: workload: %w", err)
	}
	return nil
}

type runner struct {
	config   Config
	result   *Result
	progress io.Writer
	start    time.Time
	log      *historyLog
	// deleter is the workload's operator deleting records, if it has one.
	deleter *deleter
	// recreator is its operator recreating a topic, if it has one.
	recreator *recreator
	// elector is its operator running leader elections, if it has one.
	elector *elector
	// alterer is its operator turning unclean leader election on and
	// off, if it has one; nodeLogs are the nodes' log files, which say
	// where a controller elected uncleanly.
	alterer  *alterer
	nodeLogs []string
	// reassigner is its operator reassigning partitions, if it has one.
	reassigner *reassigner
	// churner is its operator adding and removing group members, if it
	// has one.
	churner *churner
	// retentionStarts are the log starts after the final read, when the
	// nodes run with a retention setting (retention.go).
	retentionStarts map[int32]int64

	progressMutex sync.Mutex
}

func (r *runner) logf(format string, args ...any) {
	r.progressMutex.Lock()
	defer r.progressMutex.Unlock()
	fmt.Fprintf(r.progress, "[%7.1fs] %s\n", time.Since(r.start).Seconds(), fmt.Sprintf(format, args...))
}

// phase runs one step, timing it.
func (r *runner) phase(name string, step func() error) error {
	started := time.Since(r.start)
	r.logf("%s", name)
	err := step()
	r.result.Phases = append(r.result.Phases, Phase{Name: name, Start: started, Duration: time.Since(r.start) - started})
	return err
}

func (r *runner) problem(format string, args ...any) {
	text := fmt.Sprintf(format, args...)
	r.logf("PROBLEM: %s", text)
	r.result.Problems = append(r.result.Problems, text)
}

func (r *runner) run(ctx context.Context) error {
	w := r.config.Workload
	var cluster *Cluster
	err := r.phase(fmt.Sprintf("start a %d-node cluster", r.config.Nodes), func() error {
		var err error
		cluster, err = StartCluster(ctx, ClusterOptions{
			Binary: r.config.Binary, Nodes: r.config.Nodes, Dir: filepath.Join(r.config.Dir, "nodes"), Settings: r.config.Settings,
		})
		return err
	})
	if err != nil {
		return err
	}
	defer func() {
		_ = r.phase("stop the cluster", func() error {
			if err := cluster.Close(); err != nil {
				r.problem("stopping the cluster: %v", err)
			}
			return nil
		})
		r.result.UnexpectedExits = cluster.UnexpectedExits()
		for _, exit := range r.result.UnexpectedExits {
			r.problem("node %d exited on its own at %s: %s", exit.Node, exit.At.Format(time.RFC3339), exit.Status)
		}
		r.judge()
	}()

	err = r.phase("create the topic and wait for full ISRs", func() error {
		admin, err := kgo.NewClient(cluster.ClientOptions()...)
		if err != nil {
			return err
		}
		defer admin.Close()
		setupContext, cancel := context.WithTimeout(ctx, setupTimeout)
		defer cancel()
		configs := map[string]string{
			"min.insync.replicas":            strconv.Itoa(w.MinInsyncReplicas),
			"unclean.leader.election.enable": strconv.FormatBool(w.UncleanLeaderElection),
		}
		if _, err := CreateTopic(setupContext, admin, w.Topic, w.Partitions, w.ReplicationFactor, configs); err != nil {
			return err
		}
		return cluster.WaitHealthy(setupContext, setupTimeout, w.Topic)
	})
	if err != nil {
		return err
	}

	var workload *clients
	if err := r.phase("start the clients", func() error {
		var err error
		workload, err = startClients(cluster, r.log, w, r.config.Seed)
		return err
	}); err != nil {
		return err
	}
	r.deleter = workload.deleter
	r.recreator = workload.recreator
	r.elector = workload.elector
	r.alterer = workload.alterer
	r.reassigner = workload.reassigner
	r.churner = workload.churner
	for _, n := range cluster.Nodes() {
		r.nodeLogs = append(r.nodeLogs, n.LogPath())
	}
	stopProgress := r.reportProgress(workload)
	workloadStopped := false
	stopWorkload := func() {
		if workloadStopped {
			return
		}
		workloadStopped = true
		_ = r.phase("stop the clients", func() error {
			if err := workload.stop(); err != nil {
				r.problem("clients: %v", err)
			}
			return nil
		})
		stopProgress()
	}
	defer stopWorkload()

	sleep(ctx, warmupDuration)
	n := &nemesis{
		cluster: cluster, topic: w.Topic, faults: r.config.Faults, timing: r.config.Timing,
		random: rand.New(rand.NewPCG(r.config.Seed, nemesisStream)), clock: r.log.since, logf: r.logf,
	}
	_ = r.phase(fmt.Sprintf("faults for %v: %s", r.config.FaultPhase, joinKinds(r.config.Faults)), func() error {
		faultContext, cancel := context.WithTimeout(ctx, r.config.FaultPhase)
		defer cancel()
		n.run(faultContext)
		return nil
	})
	r.result.Faults = n.Windows()
	for _, window := range r.result.Faults {
		if window.Error != "" {
			r.problem("fault %s at %.1fs: %s", window.Kind, window.Start.Seconds(), window.Error)
		}
	}
	if err := cluster.healEverything(); err != nil {
		r.problem("%v", err)
	}
	var recoveredAt time.Duration
	recovered := r.phase("heal and wait for recovery", func() error {
		err := cluster.WaitHealthy(ctx, recoveryTimeout, w.Topic)
		recoveredAt = r.log.since()
		return err
	})
	if recovered != nil {
		r.problem("the cluster did not recover: %v", recovered)
	}
	sleep(ctx, settleDuration)
	stopWorkload()
	if recovered == nil {
		r.checkLiveness(recoveredAt)
	}

	drained := errors.New("not attempted: the cluster did not recover")
	if recovered == nil {
		_ = r.phase(drainPhaseName, func() error {
			var read int64
			read, drained = finalDrain(ctx, cluster, r.log, w.Topic, w.Partitions, drainTimeout)
			r.logf("read %d records", read)
			return nil
		})
	}
	if drained != nil {
		r.problem("final read: %v", drained)
	}
	if recovered == nil && retentionConfigured(r.config.Settings) {
		r.listRetentionStarts(ctx, cluster)
	}
	if r.recreator != nil {
		if recovered == nil {
			_ = r.phase("check the recreated topic's last incarnation", func() error {
				for _, problem := range r.recreator.check(ctx) {
					r.problem("%s", problem)
				}
				return nil
			})
		}
		r.result.Recreated, r.result.RecreatedWrites, r.result.RecreatedAcked, r.result.RecreatedConfirmed = r.recreator.counts()
		r.result.RecreatedCopiesRead = r.recreator.copiesRead.Load()
		r.recreator.client.Close()
	}
	if r.elector != nil {
		for _, problem := range r.elector.problems() {
			r.problem("%s", problem)
		}
		r.result.ElectionsSent, r.result.Elected = r.elector.sent.Load(), r.elector.elected.Load()
	}
	if r.reassigner != nil {
		for _, problem := range r.reassigner.problems() {
			r.problem("%s", problem)
		}
		if recovered == nil {
			_ = r.phase("check the reassignments ended and the removed replicas' copies went", func() error {
				for _, problem := range r.reassigner.check(ctx) {
					r.problem("%s", problem)
				}
				return nil
			})
		}
		a := r.reassigner
		r.result.ReassignmentsSent, r.result.ReassignmentsConfirmed = a.sent.Load(), a.confirmed.Load()
		r.result.ReassignmentsCancelled, r.result.ReassignmentsRefused = a.cancelled.Load(), a.refused.Load()
		a.client.Close()
	}
	if r.churner != nil {
		r.result.ChurnJoined, r.result.ChurnLeft, r.result.ChurnCrashed = r.churner.joined.Load(), r.churner.left.Load(), r.churner.crashed.Load()
	}
	r.result.Stats.Drained = drained == nil
	return nil
}

// checkLiveness requires acknowledged writes sent after recovery: a
// cluster that heals but cannot take writes has not recovered.
func (r *runner) checkLiveness(recoveredAt time.Duration) {
	ops := r.log.ops()
	invoked := map[int]int64{}
	acknowledged := 0
	for _, op := range ops {
		if op.F != history.FuncSend {
			continue
		}
		switch op.Type {
		case history.Invoke:
			invoked[op.Process] = op.Time
		case history.OK:
			if invoked[op.Process] >= int64(recoveredAt) {
				acknowledged++
			}
		}
	}
	r.logf("%d sends invoked after recovery were acknowledged", acknowledged)
	if acknowledged == 0 {
		r.problem("liveness: no send invoked after recovery (at %.1fs) was acknowledged", recoveredAt.Seconds())
	}
}

// reportProgress prints the clients' counts every progressInterval until
// the returned function is called.
func (r *runner) reportProgress(workload *clients) func() {
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		ticker := time.NewTicker(progressInterval)
		defer ticker.Stop()
		for {
			select {
			case <-done:
				return
			case <-ticker.C:
				r.logf("%s", workload.progress())
			}
		}
	}()
	return func() {
		close(done)
		<-finished
		r.logf("%s", workload.progress())
	}
}

// judge runs the checkers on the history and decides the verdict.
func (r *runner) judge() {
	ops := r.log.ops()
	options := r.checkerOptions()
	started := time.Now()
	r.result.Report = checker.Check(ops, options)
	r.result.Phases = append(r.result.Phases, Phase{Name: "check the history", Start: time.Since(r.start), Duration: time.Since(started)})
	r.result.Stats = countHistory(ops, r.result.Stats.Drained)
	r.logf("verdict: %s", r.result.Report.Summary())
	r.result.Pass = r.result.Report.Verdict == checker.Pass && len(r.result.Problems) == 0
}

func (r *runner) checkerOptions() checker.Options {
	w := r.config.Workload
	options := checker.Options{FinalDrain: r.result.Stats.Drained, SearchSteps: searchSteps}
	if !w.AcksAll {
		for partition := range w.Partitions {
			options.LossPermitted = append(options.LossPermitted, history.TopicPartition{Topic: w.Topic, Partition: partition})
		}
	}
	if r.deleter != nil {
		r.deleter.options(&options)
		r.result.DeletesSent, r.result.DeletesAnswered = r.deleter.sent.Load(), r.deleter.ok.Load()
	}
	if r.alterer != nil || w.UncleanLeaderElection {
		r.uncleanOptions(&options)
	}
	r.retentionOptions(&options)
	return options
}

// uncleanOptions permits loss, and reads below a DeleteRecords answer, in
// the partitions a controller elected a leader of outside the ISR while
// the topic allowed it (created so, or the alterer had turned unclean
// leader election on), as the nodes' logs say; every other partition
// keeps every promise.
func (r *runner) uncleanOptions(options *checker.Options) {
	w := r.config.Workload
	if r.alterer != nil {
		r.result.UncleanSent, r.result.UncleanConfirmed = r.alterer.sent.Load(), r.alterer.confirmed.Load()
		if !w.UncleanLeaderElection && !r.alterer.turnedOn.Load() {
			return
		}
	}
	partitions, err := uncleanElectedPartitions(r.nodeLogs, w.Topic)
	if err != nil {
		r.problem("%v", err)
		return
	}
	r.result.UncleanElected = partitions
	for _, partition := range partitions {
		tp := history.TopicPartition{Topic: w.Topic, Partition: partition}
		options.UncleanElected = append(options.UncleanElected, tp)
		if !slices.Contains(options.LossPermitted, tp) {
			options.LossPermitted = append(options.LossPermitted, tp)
		}
	}
}
