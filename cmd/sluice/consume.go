package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

func init() {
	register("consume", "print records of a topic, from earliest, latest or an offset", runConsume)
}

// joinWaitMax bounds how long --exit-idle waits for a group to assign
// partitions before giving up (the broker unreachable, the group never
// settling); joinPollMax is how often it looks while it waits.
const (
	joinWaitMax = 60 * time.Second
	joinPollMax = 500 * time.Millisecond
)

func runConsume(args []string) int {
	flags := flag.NewFlagSet("consume", flag.ContinueOnError)
	brokers := flags.String("brokers", "127.0.0.1:9092", "bootstrap brokers, comma-separated")
	topic := flags.String("topic", "", "topic to consume (required)")
	from := flags.String("from", "earliest", "earliest, latest, or an offset (applies to every partition)")
	group := flags.String("group", "", "consume as this consumer group, committing offsets (resumes where the group left off)")
	count := flags.Int("count", 0, "stop after this many records (0: run until Ctrl-C)")
	idle := flags.Duration("exit-idle", 0, "stop when no record arrived for this long (0: never)")
	printKeys := flags.Bool("keys", false, "print key<TAB>value")
	positional, err := parseAnyOrder(flags, args)
	if err != nil {
		return 2
	}
	if !noPositional("consume", positional) {
		return 2
	}
	if *topic == "" {
		fmt.Fprintln(os.Stderr, "sluice consume: --topic is required")
		return 2
	}
	if *count < 0 || *idle < 0 {
		fmt.Fprintf(os.Stderr, "sluice consume: --count %d, --exit-idle %s: want neither negative (0: no limit)\n", *count, *idle)
		return 2
	}
	var start kgo.Offset
	switch *from {
	case "earliest":
		start = kgo.NewOffset().AtStart()
	case "latest":
		start = kgo.NewOffset().AtEnd()
	default:
		n, err := strconv.ParseInt(*from, 10, 64)
		if err != nil || n < 0 {
			fmt.Fprintf(os.Stderr, "sluice consume: --from %q: want earliest, latest or an offset\n", *from)
			return 2
		}
		start = kgo.NewOffset().At(n)
	}
	warnings := clientWarnings("consume")
	options := []kgo.Opt{
		kgo.SeedBrokers(strings.Split(*brokers, ",")...),
		kgo.ClientID("sluice-consume"), // what a group's describe and the broker's log name it by
		kgo.ConsumeTopics(*topic),
		kgo.ConsumeResetOffset(start),
		kgo.WithLogger(warnings),
	}
	// The idle clock of --exit-idle starts once there is something to
	// consume: at once for a plain consumer, but for a group member only
	// when the group has assigned it partitions, which takes at least the
	// broker's group.initial.rebalance.delay.ms (3s) for a new group.
	var assigned atomic.Bool
	if *group != "" {
		// Commit exactly what was printed, no more, so --count leaves the
		// group's position right after the last record shown.
		options = append(options, kgo.ConsumerGroup(*group), kgo.DisableAutoCommit(),
			kgo.OnPartitionsAssigned(func(context.Context, *kgo.Client, map[string][]int32) { assigned.Store(true) }))
	} else {
		assigned.Store(true)
	}
	client, err := kgo.NewClient(options...)
	if err != nil {
		fmt.Fprintln(os.Stderr, "sluice consume:", err)
		return 1
	}
	defer client.Close()

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	warnIfMissing(ctx, client, *topic)
	seen := 0
	started := time.Now()
	var idleFrom time.Time // the assignment, then the last record
	for {
		pollCtx := ctx
		var cancel context.CancelFunc
		if *idle > 0 {
			deadline := time.Now().Add(joinPollMax) // not assigned yet: look again soon
			switch {
			case assigned.Load():
				if idleFrom.IsZero() {
					idleFrom = time.Now()
				}
				deadline = idleFrom.Add(*idle)
			case time.Since(started) >= joinWaitMax:
				fmt.Fprintf(os.Stderr, "sluice consume: group %s was assigned no partition of %s within %s\n", *group, *topic, joinWaitMax)
				return 1
			}
			pollCtx, cancel = context.WithDeadline(ctx, deadline)
		}
		fetches := client.PollFetches(pollCtx)
		if cancel != nil {
			cancel()
		}
		if ctx.Err() != nil || (*idle > 0 && fetches.NumRecords() == 0 && !idleFrom.IsZero() && time.Since(idleFrom) >= *idle) {
			break
		}
		for _, e := range fetches.Errors() {
			if e.Err != context.DeadlineExceeded && e.Err != context.Canceled {
				if e.Topic == "" { // the client's own error (a group join), not a partition's
					warnings.Say(e.Err.Error())
				} else {
					warnings.Say(fmt.Sprintf("%s[%d]: %v", e.Topic, e.Partition, e.Err))
				}
			}
		}
		stopNow := false
		var printed []*kgo.Record
		fetches.EachRecord(func(r *kgo.Record) {
			if stopNow {
				return
			}
			printed = append(printed, r)
			idleFrom = time.Now()
			if *printKeys {
				fmt.Printf("%s\t%s\n", r.Key, r.Value)
			} else {
				fmt.Printf("%s\n", r.Value)
			}
			seen++
			if *count > 0 && seen >= *count {
				stopNow = true
			}
		})
		if *group != "" && len(printed) > 0 {
			if err := client.CommitRecords(context.Background(), printed...); err != nil {
				fmt.Fprintln(os.Stderr, "sluice consume: commit:", err)
			}
		}
		if stopNow {
			break
		}
	}
	return 0
}

// topicCheckTimeout bounds the look for the topic before consuming.
const topicCheckTimeout = 10 * time.Second

// warnIfMissing says so when the topic does not exist: consume then waits
// for it to be created, as Kafka's console consumer does, but a typo in
// the name should not look like an empty topic. A broker that does not
// answer is left to the client's own warnings.
func warnIfMissing(ctx context.Context, client *kgo.Client, topic string) {
	ctx, cancel := context.WithTimeout(ctx, topicCheckTimeout)
	defer cancel()
	topics, err := kadm.NewClient(client).ListTopics(ctx, topic)
	if err != nil {
		return
	}
	if detail, ok := topics[topic]; ok && errors.Is(detail.Err, kerr.UnknownTopicOrPartition) {
		fmt.Fprintf(os.Stderr, "sluice consume: topic %s does not exist; waiting for it\n", topic)
	}
}
