package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"sluice/jepsen/bench"
)

func init() {
	register("produce", "produce lines from stdin as records", runProduce)
}

// lineBytesMax bounds one input line (one record).
const lineBytesMax = 16 << 20

// deliveryTimeoutDefault is Kafka's delivery.timeout.ms: how long a record
// may be retried (say, while the leader answers NOT_ENOUGH_REPLICAS or
// KAFKA_STORAGE_ERROR) before the producer gives up on it.
const deliveryTimeoutDefault = 2 * time.Minute

func runProduce(args []string) int {
	flags := flag.NewFlagSet("produce", flag.ContinueOnError)
	brokers := flags.String("brokers", "127.0.0.1:9092", "bootstrap brokers, comma-separated")
	topic := flags.String("topic", "", "topic to produce to (required)")
	keySeparator := flags.String("key-separator", "", "split each line at the first occurrence into key and value")
	partition := flags.Int("partition", -1, "produce to this partition (default: by key hash, or sticky when unkeyed)")
	acks := flags.String("acks", "all", "all, 1 or 0")
	compression := flags.String("compression", "snappy", "compression.type of the batches: none, gzip, snappy, lz4 or zstd")
	deliveryTimeout := flags.Duration("delivery-timeout", deliveryTimeoutDefault, "give up on a record not acknowledged within this long, retries included (Kafka's delivery.timeout.ms)")
	positional, err := parseAnyOrder(flags, args)
	if err != nil {
		return 2
	}
	if !noPositional("produce", positional) {
		return 2
	}
	if *topic == "" {
		fmt.Fprintln(os.Stderr, "sluice produce: --topic is required")
		return 2
	}
	if *deliveryTimeout <= 0 {
		fmt.Fprintf(os.Stderr, "sluice produce: --delivery-timeout %s: want a positive duration\n", *deliveryTimeout)
		return 2
	}
	codec, err := bench.CompressionCodec(*compression)
	if err != nil {
		fmt.Fprintf(os.Stderr, "sluice produce: --%v\n", err)
		return 2
	}
	options := []kgo.Opt{
		kgo.SeedBrokers(strings.Split(*brokers, ",")...),
		kgo.ProducerBatchCompression(codec),
		kgo.ClientID("sluice-produce"), // what a group's describe and the broker's log name it by
		kgo.DefaultProduceTopic(*topic),
		kgo.RecordDeliveryTimeout(*deliveryTimeout),
		kgo.WithLogger(clientWarnings("produce")),
		// Kafka's producers default to allow.auto.create.topics=true, so
		// producing to a new topic creates it where the broker allows
		// (auto.create.topics.enable); kgo's default is the opposite.
		kgo.AllowAutoTopicCreation(),
	}
	switch *acks {
	case "all", "-1":
		options = append(options, kgo.RequiredAcks(kgo.AllISRAcks()))
	case "1":
		options = append(options, kgo.RequiredAcks(kgo.LeaderAck()), kgo.DisableIdempotentWrite())
	case "0":
		options = append(options, kgo.RequiredAcks(kgo.NoAck()), kgo.DisableIdempotentWrite())
	default:
		fmt.Fprintf(os.Stderr, "sluice produce: --acks %q: want all, 1 or 0\n", *acks)
		return 2
	}
	if *partition >= 0 {
		options = append(options, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	watch := watchDelivery(*deliveryTimeout, cancel)
	defer watch.stop()
	if *acks != "0" {
		options = append(options, kgo.WithHooks(watch))
	}
	client, err := kgo.NewClient(options...)
	if err != nil {
		fmt.Fprintln(os.Stderr, "sluice produce:", err)
		return 1
	}
	defer client.Close()

	scanner := bufio.NewScanner(os.Stdin)
	scanner.Buffer(make([]byte, 64<<10), lineBytesMax)
	// Promises run on the client's goroutines.
	var failures, acknowledged atomic.Int64
	var firstFailure atomic.Pointer[error]
	produced := 0
	for ctx.Err() == nil && scanner.Scan() {
		line := scanner.Text()
		r := &kgo.Record{Value: []byte(line), Partition: int32(*partition)}
		if *keySeparator != "" {
			if key, value, ok := strings.Cut(line, *keySeparator); ok {
				r.Key, r.Value = []byte(key), []byte(value)
			}
		}
		watch.sent()
		client.Produce(ctx, r, func(r *kgo.Record, err error) {
			watch.settled()
			if err != nil {
				failures.Add(1)
				firstFailure.CompareAndSwap(nil, &err)
			} else {
				acknowledged.Add(1)
			}
		})
		produced++
	}
	if err := scanner.Err(); err != nil {
		fmt.Fprintln(os.Stderr, "sluice produce: reading stdin:", err)
		return 1
	}
	if err := client.Flush(ctx); err != nil && !watch.expired() {
		fmt.Fprintln(os.Stderr, "sluice produce:", err)
		return 1
	}
	if watch.expired() {
		// kgo keeps an idempotent batch it sent and got no answer for,
		// whatever its delivery timeout, since only the answer says
		// whether it was written; Kafka's producer gives up on it after
		// delivery.timeout.ms, and so does this command (produce_watch.go).
		fmt.Fprintf(os.Stderr, "sluice produce: %d of %d records not produced to %s: a broker left a Produce request unanswered for --delivery-timeout %s; the records it carried may or may not have been written\n", int64(produced)-acknowledged.Load(), produced, *topic, *deliveryTimeout)
		return 1
	}
	if failed := failures.Load(); failed > 0 {
		first := *firstFailure.Load()
		fmt.Fprintf(os.Stderr, "sluice produce: %d of %d records not produced to %s: %v\n", failed, produced, *topic, first)
		if errors.Is(first, kgo.ErrRecordTimeout) {
			// kgo does not say what the broker answered to the retries.
			fmt.Fprintf(os.Stderr, "sluice produce: retried for --delivery-timeout %s: the broker was unreachable or kept refusing them (NOT_ENOUGH_REPLICAS, KAFKA_STORAGE_ERROR on a full disk, ...; its log says which)\n", *deliveryTimeout)
		}
		return 1
	}
	fmt.Fprintf(os.Stderr, "produced %d records to %s\n", produced, *topic)
	return 0
}
