package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"sluice/jepsen/harness"
)

func init() {
	register("jepsen", "run a cluster under faults with real clients and judge the history (sluice jepsen --duration 4m)", runJepsen)
}

// runJepsen is the black-box fault harness (jepsen/harness): it starts a
// cluster of this binary on loopback behind fault proxies, runs kgo
// producers and consumers while a nemesis kills, pauses, partitions and
// restarts nodes, heals, reads everything back, judges the history with
// jepsen/checker and writes a results folder: verdict.txt,
// history.jsonl, faults.json, report.html (latency and throughput over
// time with the fault windows shaded) and the nodes' logs. It exits 0 when
// the run passes, 1 when it does not.
//
// --power-check instead runs the configurations that permit loss (acks=1
// under leader kills and partitions; unclean leader election under
// partitions, on 5 nodes) and one that does not (acks=all,
// min.insync.replicas=2, RF=3), and exits 0 only if loss was found in the
// first two and none in the last.
func runJepsen(args []string) int {
	flags := flag.NewFlagSet("jepsen", flag.ContinueOnError)
	nodes := flags.Int("nodes", 3, "cluster size (every node is broker and controller)")
	duration := flags.Duration("duration", 4*time.Minute, "how long the nemesis injects faults")
	faults := flags.String("faults", "kill,pause,partition,rolling,full-kill", "fault kinds, comma-separated, or all: kill, pause, partition, rolling, full-kill, slow, clients, strand")
	acks := flags.String("acks", "all", "producers' acks: all or 1")
	idempotence := flags.String("idempotence", "mixed", "idempotent producers: mixed (half of them), on or off (acks=1 needs off)")
	churnEvery := flags.Duration("churn-every", 0, "have an operator add a member to the group and take it out again, in turn, this often (rebalances under faults); 0: never")
	churnExit := flags.String("churn-exit", "leave", "how the churned members go: leave (close, LeaveGroup), crash (connections cut, nothing more said: the coordinator expires them after the session timeout) or mixed (every other one crashes)")
	static := flags.Bool("static", false, "give every group member a group.instance.id (KIP-345 static membership)")
	balancer := flags.String("balancer", "range", "the group's assignor: range (eager) or cooperative-sticky (KIP-429, franz-go's default)")
	partitions := flags.Int("partitions", 4, "partitions of the workload's topic")
	replicationFactor := flags.Int("replication-factor", 0, "the topic's replication factor (0: 3, or the cluster's size if smaller)")
	minInsync := flags.Int("min-insync", 0, "the topic's min.insync.replicas (0: 2, or the replication factor if smaller)")
	unclean := flags.Bool("unclean", false, "the topic's unclean.leader.election.enable")
	rate := flags.Int("rate", 200, "sends per second, all producers together")
	concurrency := flags.Int("producer-concurrency", 4, "processes per producer client, each with one send in flight; more than --partitions puts several of one client's batches in flight to a partition at once (the idempotent producer's window of five)")
	batchRecords := flags.Int("batch", 1, "records per send, handed to the client together (one batch)")
	compression := flags.String("compression", "", "the producers' compression.type: none, gzip, snappy, lz4 or zstd (default: franz-go's, snappy)")
	deleteEvery := flags.Duration("delete-every", 0, "have an operator delete what the group consumed (DeleteRecords) this often; 0: never")
	recreateEvery := flags.Duration("recreate-every", 0, "have an operator delete a topic of its own and create it again this often (at least 200ms); 0: never")
	electEvery := flags.Duration("elect-every", 0, "have an operator run preferred leader elections (ElectLeaders) for every partition this often; 0: never")
	alterEvery := flags.Duration("alter-every", 0, "have an operator turn the topic's unclean.leader.election.enable on and off in turn this often (loss is then permitted only where a controller elected outside the ISR); 0: never")
	reassignEvery := flags.Duration("reassign-every", 0, "have an operator move a random partition to random nodes, or cancel its move (AlterPartitionReassignments), this often; after the run none may be left in progress nor any removed replica's copy on disk; 0: never")
	seed := flags.Uint64("seed", uint64(time.Now().UnixNano()), "seed of the nemesis's choices (targets, durations, shapes)")
	out := flags.String("out", "jepsen-results", "results root: each run writes to ROOT/<timestamp>")
	holdMin := flags.Duration("hold-min", 4*time.Second, "shortest fault")
	holdMax := flags.Duration("hold-max", 10*time.Second, "longest fault")
	quiet := flags.Duration("quiet", 5*time.Second, "healthy time between faults")
	binary := flags.String("binary", "", "the sluice binary the nodes run (default: this one)")
	powerCheck := flags.Bool("power-check", false, "run the loss-permitting configurations and require the checkers to find loss (about 5 minutes with --duration 60s)")
	var overrides settings
	flags.Var(&overrides, "set", "a Kafka broker setting key=value for every node (repeatable)")
	if err := flags.Parse(args); err != nil {
		return 2
	}
	if *binary == "" {
		self, err := os.Executable()
		if err != nil {
			fmt.Fprintln(os.Stderr, "sluice jepsen: cannot find this program to run the nodes:", err)
			return 1
		}
		*binary = self
	}
	kinds, err := harness.ParseFaults(*faults)
	if err != nil {
		fmt.Fprintln(os.Stderr, "sluice jepsen: --faults:", err)
		return 2
	}
	mode, err := harness.ParseIdempotence(*idempotence)
	if err != nil {
		fmt.Fprintln(os.Stderr, "sluice jepsen: --idempotence:", err)
		return 2
	}
	groupBalancer, err := harness.ParseBalancer(*balancer)
	if err != nil {
		fmt.Fprintln(os.Stderr, "sluice jepsen: --balancer:", err)
		return 2
	}
	exit, err := harness.ParseChurnExit(*churnExit)
	if err != nil {
		fmt.Fprintln(os.Stderr, "sluice jepsen: --churn-exit:", err)
		return 2
	}
	if exit != harness.ChurnExitLeave && *churnEvery == 0 {
		fmt.Fprintf(os.Stderr, "sluice jepsen: --churn-exit %s: set --churn-every too\n", exit)
		return 2
	}
	if *acks != "all" && *acks != "1" {
		fmt.Fprintf(os.Stderr, "sluice jepsen: --acks %q: all or 1\n", *acks)
		return 2
	}
	if *nodes < 1 {
		fmt.Fprintf(os.Stderr, "sluice jepsen: --nodes %d: at least 1\n", *nodes)
		return 2
	}
	workload := harness.DefaultWorkload(*nodes)
	workload.Partitions = int32(*partitions)
	if *replicationFactor > 0 {
		workload.ReplicationFactor = int16(*replicationFactor)
		workload.MinInsyncReplicas = min(workload.MinInsyncReplicas, *replicationFactor)
	}
	if *minInsync > 0 {
		workload.MinInsyncReplicas = *minInsync
	}
	workload.UncleanLeaderElection = *unclean
	workload.AcksAll = *acks == "all"
	workload.Idempotence = mode
	workload.Balancer = groupBalancer
	workload.ChurnEvery = *churnEvery
	workload.ChurnExit = exit
	workload.Static = *static
	workload.SendsPerSecond = *rate
	workload.ProducerConcurrency = *concurrency
	workload.BatchRecords = *batchRecords
	workload.Compression = *compression
	if *deleteEvery < 0 {
		fmt.Fprintf(os.Stderr, "sluice jepsen: --delete-every %v: not negative\n", *deleteEvery)
		return 2
	}
	workload.DeleteEvery = *deleteEvery
	workload.RecreateEvery = *recreateEvery
	if *electEvery < 0 {
		fmt.Fprintf(os.Stderr, "sluice jepsen: --elect-every %v: not negative\n", *electEvery)
		return 2
	}
	workload.ElectEvery = *electEvery
	if *alterEvery < 0 {
		fmt.Fprintf(os.Stderr, "sluice jepsen: --alter-every %v: not negative\n", *alterEvery)
		return 2
	}
	workload.AlterEvery = *alterEvery
	if *reassignEvery < 0 {
		fmt.Fprintf(os.Stderr, "sluice jepsen: --reassign-every %v: not negative\n", *reassignEvery)
		return 2
	}
	workload.ReassignEvery = *reassignEvery

	root, err := filepath.Abs(*out)
	if err != nil {
		fmt.Fprintln(os.Stderr, "sluice jepsen: --out:", err)
		return 2
	}
	config := harness.Config{
		Binary:     *binary,
		Nodes:      *nodes,
		FaultPhase: *duration,
		Faults:     kinds,
		Timing:     harness.NemesisTiming{HoldMin: *holdMin, HoldMax: *holdMax, Quiet: *quiet, FullKillDowntime: 2 * time.Second},
		Seed:       *seed,
		Dir:        filepath.Join(root, time.Now().Format("20060102-150405")),
		Workload:   workload,
		Settings:   overrides,
		Progress:   os.Stdout,
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	if *powerCheck {
		return runPowerCheck(ctx, config)
	}
	fmt.Printf("sluice jepsen: %d nodes, %v of faults (%s), seed %d; results in %s\n", config.Nodes, config.FaultPhase, *faults, config.Seed, config.Dir)
	result, err := harness.Run(ctx, config)
	if err != nil {
		fmt.Fprintln(os.Stderr, "sluice jepsen:", err)
		if result == nil {
			return 1
		}
	}
	verdict, _ := os.ReadFile(filepath.Join(result.Dir, harness.VerdictFile))
	fmt.Printf("\n%s\nresults: %s (open %s)\n", verdict, result.Dir, filepath.Join(result.Dir, harness.ReportFile))
	if !result.Pass {
		return 1
	}
	return 0
}

func runPowerCheck(ctx context.Context, base harness.Config) int {
	fmt.Printf("sluice jepsen --power-check: %v of faults per case, seed %d; results in %s\n", base.FaultPhase, base.Seed, base.Dir)
	outcomes, err := harness.PowerCheck(ctx, harness.PowerCases(base))
	fmt.Println("\npower check:")
	failed := err != nil
	for _, o := range outcomes {
		fmt.Println(" ", o)
		failed = failed || !o.OK
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "sluice jepsen:", err)
	}
	if failed {
		return 1
	}
	return 0
}
