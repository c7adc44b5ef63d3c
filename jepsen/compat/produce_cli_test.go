package compat

import (
	"bytes"
	"context"
	"errors"
	"os/exec"
	"regexp"
	"testing"
)

// TestSluiceProduceGivesUpAfterTheDeliveryTimeout: `sluice produce` retries
// a refused record, as Kafka's console producer does, only for
// --delivery-timeout (delivery.timeout.ms), then says how many records it
// could not produce and exits 1, rather than retrying forever. The topic
// wants two in-sync replicas and has one, so the broker answers every try
// NOT_ENOUGH_REPLICAS. To a healthy topic the same command produces every
// line, in order.
func TestSluiceProduceGivesUpAfterTheDeliveryTimeout(t *testing.T) {
	t.Parallel()
	broker := StartBroker(t, Options{})
	binary := BuildBinary(t)
	ctx, cancel := context.WithTimeout(context.Background(), clientTimeout)
	defer cancel()
	lines := []byte("one\ntwo\nthree\n")
	runOutsideTool(t, nil, binary, "topic", "create", "--brokers", broker.Addr(), "--partitions", "1", "--config", "min.insync.replicas=2", "strict")
	runSluiceWithInput(ctx, t, lines, binary, "produce", "--brokers", broker.Addr(), "--topic", "strict", "--delivery-timeout", "2s").
		expect(t, 1, "^$", `^sluice produce: 3 of 3 records not produced to strict: records have timed out.*\nsluice produce: retried for --delivery-timeout 2s: `)

	runOutsideTool(t, nil, binary, "topic", "create", "--brokers", broker.Addr(), "--partitions", "1", "lenient")
	runSluiceWithInput(ctx, t, lines, binary, "produce", "--brokers", broker.Addr(), "--topic", "lenient", "--delivery-timeout", "2s").
		expect(t, 0, "^$", "^produced 3 records to lenient\n$")
	if consumed := string(runOutsideTool(t, nil, binary, "consume", "--brokers", broker.Addr(), "--topic", "lenient", "--count", "3")); consumed != string(lines) {
		t.Fatalf("consumed %q, want %q", consumed, lines)
	}
}

// TestSluiceProduceGivesUpOnABrokerThatStopsAnswering: a broker that stops
// answering with a batch in flight (paused, not gone: the connection stays
// open) does not hold `sluice produce` past --delivery-timeout. kgo keeps
// such an idempotent batch until an answer comes, since only the answer
// says whether it was written; Kafka's producer fails it after
// delivery.timeout.ms, and the command does too, saying that the record may
// or may not have been written. The first line was acknowledged before the
// pause (it is readable, and so answered), the second never is.
func TestSluiceProduceGivesUpOnABrokerThatStopsAnswering(t *testing.T) {
	t.Parallel()
	broker := StartBroker(t, Options{})
	t.Cleanup(broker.Resume) // before StartBroker's cleanup stops it
	binary := BuildBinary(t)
	ctx, cancel := context.WithTimeout(context.Background(), clientTimeout)
	defer cancel()
	runOutsideTool(t, nil, binary, "topic", "create", "--brokers", broker.Addr(), "--partitions", "1", "frozen")

	cmd := exec.CommandContext(ctx, binary, "produce", "--brokers", broker.Addr(), "--topic", "frozen", "--delivery-timeout", "2s")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	if _, err := stdin.Write([]byte("one\n")); err != nil {
		t.Fatal(err)
	}
	if consumed := string(runOutsideTool(t, nil, binary, "consume", "--brokers", broker.Addr(), "--topic", "frozen", "--count", "1")); consumed != "one\n" {
		t.Fatalf("consumed %q before the pause, want %q", consumed, "one\n")
	}
	broker.Pause()
	if _, err := stdin.Write([]byte("two\n")); err != nil {
		t.Fatal(err)
	}
	stdin.Close()
	err = cmd.Wait()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 1 {
		t.Fatalf("sluice produce ended with %v (context: %v), want exit status 1\nstderr:\n%s", err, ctx.Err(), stderr.String())
	}
	want := `(?m)^sluice produce: 1 of 2 records not produced to frozen: a broker left a Produce request unanswered for --delivery-timeout 2s; the records it carried may or may not have been written$`
	if !regexp.MustCompile(want).MatchString(stderr.String()) {
		t.Fatalf("stderr:\n%s\nwant a line matching %q", stderr.String(), want)
	}
}

// TestSluiceProduceCreatesAMissingTopic: producing to a topic that does not
// exist creates it, as Kafka's console producer does
// (allow.auto.create.topics) on a broker that allows it
// (auto.create.topics.enable, on by default), with the broker's
// num.partitions. A broker that does not allow it refuses every record,
// and `sluice produce` says so.
func TestSluiceProduceCreatesAMissingTopic(t *testing.T) {
	t.Parallel()
	binary := BuildBinary(t)
	ctx, cancel := context.WithTimeout(context.Background(), clientTimeout)
	defer cancel()
	lines := []byte("one\ntwo\nthree\n")

	allowing := StartBroker(t, Options{Settings: []string{"num.partitions=2"}})
	runSluiceWithInput(ctx, t, lines, binary, "produce", "--brokers", allowing.Addr(), "--topic", "fresh", "--partition", "1").
		expect(t, 0, "^$", "^produced 3 records to fresh\n$")
	runSluice(ctx, t, binary, "topic", "describe", "--brokers", allowing.Addr(), "fresh").
		expect(t, 0, `(?m)^topic fresh\s.*\spartitions 2\s`, "^$")
	if consumed := string(runOutsideTool(t, nil, binary, "consume", "--brokers", allowing.Addr(), "--topic", "fresh", "--count", "3")); consumed != string(lines) {
		t.Fatalf("consumed %q, want %q", consumed, lines)
	}

	refusing := StartBroker(t, Options{Settings: []string{"auto.create.topics.enable=false"}})
	runSluiceWithInput(ctx, t, lines, binary, "produce", "--brokers", refusing.Addr(), "--topic", "fresh", "--delivery-timeout", "2s").
		expect(t, 1, "^$", `(?s)^sluice produce: 3 of 3 records not produced to fresh: .*UNKNOWN_TOPIC_OR_PARTITION`)
}

// TestSluiceProduceCompressesWithTheCodecAsked: --compression picks the
// batches' codec (compression.type); each one the broker takes, reads
// inside (it checks every record) and serves back, and one Kafka does not
// have is refused before anything is sent.
func TestSluiceProduceCompressesWithTheCodecAsked(t *testing.T) {
	t.Parallel()
	broker := StartBroker(t, Options{})
	binary := BuildBinary(t)
	ctx, cancel := context.WithTimeout(context.Background(), clientTimeout)
	defer cancel()
	lines := []byte("one\ntwo\nthree\n")
	for _, codec := range []string{"none", "gzip", "snappy", "lz4", "zstd"} {
		topic := "compressed-" + codec
		runSluiceWithInput(ctx, t, lines, binary, "produce", "--brokers", broker.Addr(), "--topic", topic, "--compression", codec).
			expect(t, 0, "^$", "^produced 3 records to "+topic+"\n$")
		if consumed := string(runOutsideTool(t, nil, binary, "consume", "--brokers", broker.Addr(), "--topic", topic, "--count", "3")); consumed != string(lines) {
			t.Fatalf("%s: consumed %q, want %q", codec, consumed, lines)
		}
	}
	runSluiceWithInput(ctx, t, lines, binary, "produce", "--brokers", broker.Addr(), "--topic", "never", "--compression", "brotli").
		expect(t, 2, "^$", `^sluice produce: --compression "brotli": want none, gzip, snappy, lz4 or zstd\n$`)
}
