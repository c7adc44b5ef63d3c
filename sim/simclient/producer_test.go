package simclient

import (
	"slices"
	"strings"
	"testing"
	"time"

	"sluice/core/broker"
	"sluice/core/replica"
	"sluice/jepsen/history"
	"sluice/sim/simdisk"
)

// slowSync makes every fsync take longer than the client's request
// timeout, so an acks=all produce's first attempt always times out after
// the broker appended it.
var slowSync = simdisk.Faults{SyncLatencyMin: 300 * time.Millisecond, SyncLatencyMax: 300 * time.Millisecond}

func shortTimeout(config *Config) { config.RequestTimeout = 100 * time.Millisecond }

func TestIdempotentRetryAfterTimeoutIsWrittenOnce(t *testing.T) {
	c := newCluster(t, 3, slowSync)
	c.createTopic()
	p := NewProducer(c.client("p1", shortTimeout), ProducerConfig{Acks: -1, Idempotent: true}, c.recorder, c.processes)
	result := c.send(p, 0, "only-once")
	c.runUntil(time.Minute, "the send", func() bool { return result.Type != 0 })
	if result.Type != history.OK || result.Offset != 0 {
		t.Fatalf("send: %+v, want ok at offset 0", *result)
	}
	if p.Stats().Retries == 0 {
		t.Fatalf("no retry happened (stats %+v); the test no longer exercises deduplication", p.Stats())
	}
	ops := c.drain("reader")
	if got := polledValues(ops, tp(0)); !slices.Equal(got, []string{"only-once"}) {
		t.Fatalf("partition 0 holds %q, want the value once", got)
	}
}

func TestIdempotentRetryIsWrittenTwiceWhenTheDuplicateCanaryIsPlanted(t *testing.T) {
	// The same run as above with the broker's deduplication switched off
	// shows the test above would see a duplicate.
	c := newCluster(t, 3, slowSync, withCanaries(replica.CanaryDuplicateWindowIgnored))
	c.createTopic()
	p := NewProducer(c.client("p1", shortTimeout), ProducerConfig{Acks: -1, Idempotent: true}, c.recorder, c.processes)
	result := c.send(p, 0, "only-once")
	c.runUntil(time.Minute, "the send", func() bool { return result.Type != 0 })
	ops := c.drain("reader")
	if got := polledValues(ops, tp(0)); len(got) < 2 {
		t.Fatalf("partition 0 holds %q; with the canary the retry should be written again", got)
	}
}

func TestPlainProducerNeverRetriesAnUnknownOutcome(t *testing.T) {
	c := newCluster(t, 3, slowSync)
	c.createTopic()
	p := NewProducer(c.client("p1", shortTimeout), ProducerConfig{Acks: -1}, c.recorder, c.processes)
	first := c.send(p, 0, "first")
	c.runUntil(time.Minute, "the first send", func() bool { return first.Type != 0 })
	if first.Type != history.Info {
		t.Fatalf("first send: %+v, want info after the timeout", *first)
	}
	if p.Stats().Attempts != 1 {
		t.Fatalf("%d attempts, want 1: a plain producer must not retry an unknown outcome", p.Stats().Attempts)
	}
	second := c.send(p, 0, "second")
	c.runUntil(time.Minute, "the second send", func() bool { return second.Type != 0 })
	if second.Type != history.Info {
		t.Fatalf("second send: %+v, want info after the timeout", *second)
	}
	c.run(5 * time.Second) // a few slow sync rounds: both appends are durable

	sends := completions(c.recorder.History(), history.FuncSend)
	if len(sends) != 2 || sends[0].Process == sends[1].Process {
		t.Fatalf("sends %+v: the process after an info must be a new one", sends)
	}
	ops := c.drain("reader")
	if got := polledValues(ops, tp(0)); slices.Index(got, "first") < 0 || len(got) != 2 {
		t.Fatalf("partition 0 holds %q, want first (written before the timeout) and second once each", got)
	}
}

func TestTooLargeIsAFailWithoutRetry(t *testing.T) {
	c := newCluster(t, 3, simdisk.Faults{}, withBrokerConfig(func(config *broker.Config) {
		config.TopicDefaults = map[string]string{"max.message.bytes": "200"}
	}))
	p := NewProducer(c.client("p1"), ProducerConfig{Acks: 1, Idempotent: true}, c.recorder, c.processes)
	big := c.send(p, 0, strings.Repeat("x", 300))
	c.runUntil(time.Minute, "the big send", func() bool { return big.Type != 0 })
	if big.Type != history.Fail || !strings.Contains(big.Err.Error(), "MESSAGE_TOO_LARGE") {
		t.Fatalf("big send: %+v, want fail with MESSAGE_TOO_LARGE", *big)
	}
	// The refused batch did not use its sequence number: the next one
	// takes it and is accepted.
	small := c.send(p, 0, "small")
	c.runUntil(time.Minute, "the small send", func() bool { return small.Type != 0 })
	if small.Type != history.OK || small.Offset != 0 {
		t.Fatalf("small send: %+v, want ok at offset 0", *small)
	}
}

func TestClientCrashRecordsTheSendInFlightAsInfo(t *testing.T) {
	c := newCluster(t, 3, slowSync)
	client := c.client("p1")
	p := NewProducer(client, ProducerConfig{Acks: -1, Idempotent: true}, c.recorder, c.processes)
	inFlight := c.send(p, 1, "in-flight")
	c.run(50 * time.Millisecond)
	client.Crash()
	ops := c.recorder.History()
	last := ops[len(ops)-1]
	if last.F != history.FuncSend || last.Type != history.Info || !strings.Contains(last.Error, "crashed") {
		t.Fatalf("last op %+v, want the send completed as info at the crash", last)
	}
	if inFlight.Type != 0 {
		t.Fatalf("the crashed process's callback ran: %+v", *inFlight)
	}
	if !p.Idle(tp(1)) {
		t.Fatal("the lane is still busy after the crash")
	}
	client.Restart()
	after := c.send(p, 1, "after")
	c.runUntil(time.Minute, "the send after the restart", func() bool { return after.Type != 0 })
	if after.Type != history.OK {
		t.Fatalf("send after restart: %+v", *after)
	}
	if sends := completions(c.recorder.History(), history.FuncSend); sends[0].Process == sends[1].Process {
		t.Fatal("the send after the crash reused the retired process")
	}
}

func TestAcksOneAnswersBeforeTheSyncAndMayLoseTheWrite(t *testing.T) {
	c := newCluster(t, 3, slowSync)
	p := NewProducer(c.client("p1"), ProducerConfig{Acks: 1}, c.recorder, c.processes)
	result := c.send(p, 0, "fragile")
	c.runUntil(5*time.Second, "the acks=1 answer", func() bool { return result.Type != 0 })
	if result.Type != history.OK {
		t.Fatalf("send: %+v", *result)
	}
	c.crashBroker() // before the 300 ms sync: the write is gone
	ops := c.drain("reader")
	if got := polledValues(ops, tp(0)); len(got) != 0 {
		t.Fatalf("partition 0 holds %q after losing the unsynced write", got)
	}
}
