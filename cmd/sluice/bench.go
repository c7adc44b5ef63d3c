package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"sluice/jepsen/bench"
)

func init() {
	register("bench", "load generator: produce, consume or e2e throughput and latency", runBench)
}

const benchUsage = `usage: sluice bench <produce|consume|e2e> [flags]

  sluice bench produce --record-bytes 1024 --duration 10s            as fast as possible
  sluice bench produce --rate 10000 --duration 30s                   fixed rate: ack latency percentiles
  sluice bench consume --count 1000000                               read from earliest
  sluice bench e2e --rate 10000                                      produce and consume at once: delivery latency

Run ` + "`sluice bench produce -h`" + ` for the flags.`

// benchSetupTimeout bounds creating the topic and opening the clients.
const benchSetupTimeout = time.Minute

// benchFlags are the flags of every bench subcommand; each uses a part.
type benchFlags struct {
	kafka    bench.KafkaOptions
	load     bench.Load
	brokers  string
	configs  settings
	producer int
	count    int64
	json     bool
}

func runBench(args []string) int {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		fmt.Fprintln(os.Stderr, benchUsage)
		return 2
	}
	action, args := args[0], args[1:]
	if action != "produce" && action != "consume" && action != "e2e" {
		fmt.Fprintf(os.Stderr, "sluice bench: unknown action %q\n\n%s\n", action, benchUsage)
		return 2
	}
	f, err := parseBenchFlags(action, args)
	if err != nil {
		if err != flag.ErrHelp {
			fmt.Fprintf(os.Stderr, "sluice bench %s: %v\n", action, err)
		}
		return 2
	}

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	var result any
	var failure string
	switch action {
	case "produce":
		r, err := benchProduce(ctx, f)
		if err != nil {
			fmt.Fprintf(os.Stderr, "sluice bench produce: %v\n", err)
			return 1
		}
		result, failure = r, produceFailure(r)
		if !f.json {
			printProduceReport(os.Stdout, f, r)
		}
	case "consume":
		r, err := benchConsume(ctx, f)
		if err != nil {
			fmt.Fprintf(os.Stderr, "sluice bench consume: %v\n", err)
			return 1
		}
		result, failure = r, r.Error
		if !f.json {
			printConsumeReport(os.Stdout, f, r)
		}
	case "e2e":
		r, err := benchEndToEnd(ctx, f)
		if err != nil {
			fmt.Fprintf(os.Stderr, "sluice bench e2e: %v\n", err)
			return 1
		}
		result, failure = r, r.Error
		if failure == "" {
			failure = produceFailure(r.Produce)
		}
		if !f.json {
			printEndToEndReport(os.Stdout, f, r)
		}
	}
	if f.json {
		encoder := json.NewEncoder(os.Stdout)
		encoder.SetIndent("", "  ")
		if err := encoder.Encode(result); err != nil {
			fmt.Fprintf(os.Stderr, "sluice bench %s: %v\n", action, err)
			return 1
		}
	}
	if failure != "" {
		fmt.Fprintf(os.Stderr, "sluice bench %s: %s\n", action, failure)
		return 1
	}
	return 0
}

func parseBenchFlags(action string, args []string) (benchFlags, error) {
	var f benchFlags
	flags := flag.NewFlagSet("bench "+action, flag.ContinueOnError)
	flags.StringVar(&f.brokers, "brokers", "127.0.0.1:9092", "bootstrap brokers, comma-separated")
	flags.StringVar(&f.kafka.Topic, "topic", "bench", "topic (created if missing)")
	flags.BoolVar(&f.json, "json", false, "print the result as JSON instead of a table")
	partitions := flags.Int("partitions", 1, "partitions of the topic when it is created (-1: the broker's default)")
	replicationFactor := flags.Int("replication-factor", -1, "replication factor of the topic when it is created (-1: the broker's default)")
	flags.Var(&f.configs, "topic-config", "topic config key=value when it is created (repeatable)")
	duration := flags.Duration("duration", 10*time.Second, "measured time, after the warm-up")
	if action == "consume" {
		*duration = 0
		flags.Lookup("duration").Usage = "stop this long after the first record (0: when --count records arrived)"
		flags.Lookup("duration").DefValue = "0s"
		flags.Int64Var(&f.count, "count", 0, "records to read (0: every record the topic holds when the command starts)")
	}
	recordBytes := flags.Int("record-bytes", 1024, fmt.Sprintf("value size in bytes (at least %d: the send-time stamp)", bench.StampBytes))
	rate := flags.Float64("rate", 0, "target records/s across all producers (0: as fast as possible)")
	if action == "e2e" {
		*rate = 10_000
		flags.Lookup("rate").DefValue = "10000"
	}
	warmUp := flags.Duration("warmup", 2*time.Second, "unmeasured time before the measured window")
	flags.IntVar(&f.producer, "producers", 1, "producers, each its own client and connections")
	flags.IntVar(&f.kafka.Keys, "keys", 0, "distinct keys records cycle through (0: unkeyed, kgo's sticky partitioner)")
	flags.StringVar(&f.kafka.Acks, "acks", "all", "all (idempotent), 1 or 0")
	flags.StringVar(&f.kafka.Compression, "compression", "none", "none, gzip, snappy, lz4 or zstd (payloads are random: they do not compress)")
	flags.DurationVar(&f.kafka.Linger, "linger", 0, "how long a batch waits for more records (Java's linger.ms)")
	flags.IntVar(&f.kafka.PendingMax, "max-pending", bench.PendingMaxDefault, "records produced and not yet acknowledged, per producer")
	if err := flags.Parse(args); err != nil {
		return f, err
	}
	if flags.NArg() > 0 {
		return f, fmt.Errorf("unexpected arguments %q", flags.Args())
	}
	f.kafka.Brokers = strings.Split(f.brokers, ",")
	f.kafka.Partitions = int32(*partitions)
	f.kafka.ReplicationFactor = int16(*replicationFactor)
	if *partitions != int(f.kafka.Partitions) || *replicationFactor != int(f.kafka.ReplicationFactor) {
		return f, fmt.Errorf("--partitions %d or --replication-factor %d out of range", *partitions, *replicationFactor)
	}
	f.kafka.TopicConfigs = map[string]string{}
	for _, c := range f.configs {
		key, value, ok := strings.Cut(c, "=")
		if !ok {
			return f, fmt.Errorf("--topic-config %q: expected key=value", c)
		}
		f.kafka.TopicConfigs[key] = value
	}
	f.load = bench.Load{RecordBytes: *recordBytes, Rate: *rate, WarmUp: *warmUp, Duration: *duration}
	if action == "consume" {
		if f.count < 0 || *duration < 0 {
			return f, fmt.Errorf("--count %d, --duration %v: want neither negative", f.count, *duration)
		}
		return f, nil
	}
	if f.producer < 1 || f.producer > bench.ProducersMax {
		return f, fmt.Errorf("--producers %d: want 1 to %d", f.producer, bench.ProducersMax)
	}
	if err := f.load.Validate(); err != nil {
		return f, err
	}
	return f, f.kafka.Validate()
}

// openSenders creates the topic if needed and opens one client per
// producer; the caller closes them.
func openSenders(ctx context.Context, f benchFlags) ([]bench.Sender, error) {
	setup, cancel := context.WithTimeout(ctx, benchSetupTimeout)
	defer cancel()
	if err := bench.EnsureTopic(setup, f.kafka); err != nil {
		return nil, err
	}
	var senders []bench.Sender
	for range f.producer {
		sender, err := bench.NewKafkaSender(f.kafka)
		if err != nil {
			closeSenders(senders)
			return nil, err
		}
		senders = append(senders, sender)
	}
	return senders, nil
}

func closeSenders(senders []bench.Sender) {
	for _, s := range senders {
		s.Close()
	}
}

func benchProduce(ctx context.Context, f benchFlags) (bench.ProduceResult, error) {
	senders, err := openSenders(ctx, f)
	if err != nil {
		return bench.ProduceResult{}, err
	}
	defer closeSenders(senders)
	return bench.RunProduce(ctx, f.load, senders)
}

func benchConsume(ctx context.Context, f benchFlags) (bench.ConsumeResult, error) {
	count := f.count
	if count == 0 && f.load.Duration == 0 {
		setup, cancel := context.WithTimeout(ctx, benchSetupTimeout)
		defer cancel()
		held, err := bench.CountRecords(setup, f.kafka)
		if err != nil {
			return bench.ConsumeResult{}, fmt.Errorf("counting the topic's records: %w", err)
		}
		if held == 0 {
			return bench.ConsumeResult{}, fmt.Errorf("topic %s holds no records; produce first (sluice bench produce)", f.kafka.Topic)
		}
		count = held
	}
	receiver, err := bench.NewKafkaReceiver(f.kafka, false)
	if err != nil {
		return bench.ConsumeResult{}, err
	}
	defer receiver.Close()
	return bench.RunConsume(ctx, bench.ConsumeTarget{Records: count, Duration: f.load.Duration}, receiver)
}

func benchEndToEnd(ctx context.Context, f benchFlags) (bench.EndToEndResult, error) {
	senders, err := openSenders(ctx, f)
	if err != nil {
		return bench.EndToEndResult{}, err
	}
	defer closeSenders(senders)
	receiver, err := bench.NewKafkaReceiver(f.kafka, true)
	if err != nil {
		return bench.EndToEndResult{}, err
	}
	defer receiver.Close()
	return bench.RunEndToEnd(ctx, f.load, senders, receiver)
}

// produceFailure says why a produce run did not fully succeed, or "".
func produceFailure(r bench.ProduceResult) string {
	if r.Failed > 0 {
		return fmt.Sprintf("%d of %d records failed; first error: %s", r.Failed, r.Sent, r.FirstError)
	}
	return ""
}
