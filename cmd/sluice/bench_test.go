package main

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"testing"
	"time"

	"sluice/jepsen/bench"
	"sluice/jepsen/compat"
)

// TestMain removes the binary compat.BuildBinary built for the bench
// tests once every test has run.
func TestMain(m *testing.M) {
	code := m.Run()
	compat.RemoveBinary()
	os.Exit(code)
}

// benchTestTimeout bounds each smoke run; the runs themselves last well
// under a second.
const benchTestTimeout = 2 * time.Minute

// TestBenchAgainstARealBroker runs `sluice bench produce`, `consume` and
// `e2e` against a real single-node broker with tiny durations, and checks
// the counts and that percentiles are sane. It asserts no speed.
func TestBenchAgainstARealBroker(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a real broker")
	}
	broker := compat.StartBroker(t, compat.Options{LogLevel: "warn"})
	ctx, cancel := context.WithTimeout(context.Background(), benchTestTimeout)
	defer cancel()
	common := []string{"--brokers", broker.Addr(), "--record-bytes", "100", "--warmup", "200ms", "--duration", "500ms"}

	// As fast as possible, two producers on three partitions, keyed.
	produceFlags := mustParseBenchFlags(t, "produce", append(common, "--topic", "smoke", "--partitions", "3", "--producers", "2", "--keys", "10")...)
	produced, err := benchProduce(ctx, produceFlags)
	if err != nil {
		t.Fatal(err)
	}
	if produced.Failed != 0 || produced.Sent == 0 || produced.Acknowledged != produced.Sent {
		t.Fatalf("produce: sent %d, acknowledged %d, failed %d (%s): want every record acknowledged", produced.Sent, produced.Acknowledged, produced.Failed, produced.FirstError)
	}
	if produced.Records == 0 || produced.Records > produced.Acknowledged || produced.RecordsPerSecond <= 0 {
		t.Fatalf("produce: %d records in the window of %d acknowledged, %v/s", produced.Records, produced.Acknowledged, produced.RecordsPerSecond)
	}
	checkSaneLatency(t, "produce ack", produced.Latency)
	if produced.LatencyFrom != bench.LatencyFromHandOff {
		t.Fatalf("an as-fast-as-possible run measures from the hand-off, not %q", produced.LatencyFrom)
	}

	// Consume reads back exactly what was produced: the topic is new.
	consumeFlags := mustParseBenchFlags(t, "consume", "--brokers", broker.Addr(), "--topic", "smoke")
	consumed, err := benchConsume(ctx, consumeFlags)
	if err != nil {
		t.Fatal(err)
	}
	if !consumed.Complete || consumed.Records != produced.Acknowledged || consumed.Error != "" {
		t.Fatalf("consume: %d records (complete %v, error %q), want the %d produced", consumed.Records, consumed.Complete, consumed.Error, produced.Acknowledged)
	}
	if consumed.Bytes != consumed.Records*100 {
		t.Fatalf("consume: %d bytes for %d records of 100 bytes", consumed.Bytes, consumed.Records)
	}

	// End to end at a fixed rate: the schedule sends exactly rate ×
	// (warm-up + duration) records, and every in-window one arrives.
	e2eFlags := mustParseBenchFlags(t, "e2e", append(common, "--topic", "smoke-e2e", "--rate", "1000")...)
	e2e, err := benchEndToEnd(ctx, e2eFlags)
	if err != nil {
		t.Fatal(err)
	}
	if e2e.Error != "" || e2e.Produce.Failed != 0 {
		t.Fatalf("e2e: %s; %d failed (%s)", e2e.Error, e2e.Produce.Failed, e2e.Produce.FirstError)
	}
	if e2e.Produce.Sent != 700 || e2e.Produce.Acknowledged != 700 {
		t.Fatalf("e2e: sent %d, acknowledged %d; a 1000/s schedule over 700ms sends exactly 700", e2e.Produce.Sent, e2e.Produce.Acknowledged)
	}
	if e2e.Expected != 500 || e2e.Delivered != 500 {
		t.Fatalf("e2e: delivered %d of %d; want all 500 records of the 500ms window", e2e.Delivered, e2e.Expected)
	}
	checkSaneLatency(t, "e2e ack", e2e.Produce.Latency)
	checkSaneLatency(t, "e2e delivery", e2e.Latency)
	if e2e.Produce.LatencyFrom != bench.LatencyFromIntended {
		t.Fatalf("a fixed-rate run measures from the intended send time, not %q", e2e.Produce.LatencyFrom)
	}
}

// TestBenchCommandPrintsJSON runs the binary itself, as the peers
// harness and scripts do, and decodes its --json output.
func TestBenchCommandPrintsJSON(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a real broker")
	}
	broker := compat.StartBroker(t, compat.Options{LogLevel: "warn"})
	ctx, cancel := context.WithTimeout(context.Background(), benchTestTimeout)
	defer cancel()
	output, err := exec.CommandContext(ctx, compat.BuildBinary(t), "bench", "produce", "--json",
		"--brokers", broker.Addr(), "--record-bytes", "64", "--rate", "2000", "--warmup", "100ms", "--duration", "400ms").Output()
	if err != nil {
		t.Fatalf("sluice bench produce --json: %v\n%s", err, output)
	}
	var result bench.ProduceResult
	if err := json.Unmarshal(output, &result); err != nil {
		t.Fatalf("decoding %s: %v", output, err)
	}
	// 2000/s over 500ms: exactly 1000 sent, 800 of them in the window.
	if result.Sent != 1000 || result.Acknowledged != 1000 || result.Latency.Count != 800 {
		t.Fatalf("sent %d, acknowledged %d, latency samples %d; want 1000, 1000 and 800", result.Sent, result.Acknowledged, result.Latency.Count)
	}
	checkSaneLatency(t, "json produce", result.Latency)
}

func TestBenchRejectsBadFlags(t *testing.T) {
	for _, args := range [][]string{
		{"--record-bytes", "8"},
		{"--acks", "2"},
		{"--compression", "brotli"},
		{"--rate", "-1"},
		{"--producers", "0"},
		{"--duration", "0s"},
		{"--partitions", "0"},
		{"--topic-config", "retention.ms"},
		{"stray"},
	} {
		if _, err := parseBenchFlags("produce", args); err == nil {
			t.Errorf("sluice bench produce %v: accepted", args)
		}
	}
	if code := runBench([]string{"nonsense"}); code != 2 {
		t.Errorf("an unknown action exits %d, want 2", code)
	}
}

func mustParseBenchFlags(t *testing.T, action string, args ...string) benchFlags {
	t.Helper()
	f, err := parseBenchFlags(action, args)
	if err != nil {
		t.Fatalf("sluice bench %s %v: %v", action, args, err)
	}
	return f
}

// checkSaneLatency: samples exist, percentiles are ordered, none is
// negative or beyond the whole test's time.
func checkSaneLatency(t *testing.T, name string, s bench.LatencySummary) {
	t.Helper()
	if s.Count == 0 || s.OutOfRange != 0 {
		t.Fatalf("%s latency: %d samples, %d out of range", name, s.Count, s.OutOfRange)
	}
	if !(0 <= s.Min && s.Min <= s.P50 && s.P50 <= s.P99 && s.P99 <= s.P999 && s.P999 <= s.Max && s.Max < benchTestTimeout) {
		t.Fatalf("%s latency percentiles not ordered or out of bounds: %+v", name, s)
	}
}
