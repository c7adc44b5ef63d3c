package compat

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

const (
	durabilityTopic = "durability"
	// durabilityKills is how many times the broker is killed mid-stream.
	durabilityKills = 3
	// ackedBeforeKill is how many more acknowledgements the producer must
	// collect before each kill, and ackedAfterRestart after each restart
	// (which shows it reconnected and went on).
	ackedBeforeKill   = 2000
	ackedAfterRestart = 500
	// durabilityValuesMax bounds the values produced in all, whatever the
	// broker's speed: far above what the phases need.
	durabilityValuesMax = 1_000_000
	// durabilityBufferedMax bounds the producer's unacknowledged records,
	// so a kill finds a good number in flight but not an unbounded pile.
	durabilityBufferedMax = 2000
	// durabilityDeliveryTimeout is how long kgo keeps retrying a record
	// across the restart before failing it.
	durabilityDeliveryTimeout = 30 * time.Second
	// durabilityPhaseTimeout bounds each wait for acknowledgements.
	durabilityPhaseTimeout = 60 * time.Second
)

// TestDurabilityUnderKill: an idempotent kgo producer (acks=all) writes
// unique values to a 3-partition topic as fast as it can while the broker
// is SIGKILLed and restarted on the same data directory, three times.
// Afterwards every acknowledged value must be in the log exactly once and
// no value twice: idempotence must hold across restarts. A value whose
// produce failed may be missing, or present once.
func TestDurabilityUnderKill(t *testing.T) {
	steps := newClientSteps(t, "franz-go")
	broker := StartBroker(t, Options{})
	created := steps.step("durability: create topic", true, func(t *testing.T) {
		createTopicWithFranzGo(t, broker.Addr(), durabilityTopic, roundTripPartitions)
	})
	if !created {
		return
	}
	producer := newFranzGoClient(t, broker.Addr(),
		kgo.DefaultProduceTopic(durabilityTopic),
		kgo.MaxBufferedRecords(durabilityBufferedMax),
		kgo.RecordDeliveryTimeout(durabilityDeliveryTimeout),
	)
	outcomes := newProduceOutcomes()
	produceContext, stopProducing := context.WithCancel(context.Background())
	defer stopProducing()
	producerDone := make(chan struct{})
	go func() {
		defer close(producerDone)
		for i := range durabilityValuesMax {
			value := fmt.Sprintf("value-%07d", i)
			outcomes.sent(value)
			producer.Produce(produceContext, &kgo.Record{Value: []byte(value)}, outcomes.callback(value))
			if produceContext.Err() != nil {
				return
			}
		}
	}()

	phasesPassed := steps.step("kill -9 x3 mid-stream, producer goes on", true, func(t *testing.T) {
		for kill := 1; kill <= durabilityKills; kill++ {
			outcomes.waitForAcks(t, ackedBeforeKill, fmt.Sprintf("before kill %d", kill))
			broker.Kill()
			t.Logf("kill %d: %s", kill, outcomes.summary())
			if err := broker.Restart(); err != nil {
				t.Fatalf("restart %d: %v", kill, err)
			}
			outcomes.waitForAcks(t, ackedAfterRestart, fmt.Sprintf("after restart %d", kill))
		}
	})
	stopProducing()
	<-producerDone
	flushContext, cancelFlush := context.WithTimeout(context.Background(), durabilityDeliveryTimeout+durabilityPhaseTimeout)
	if err := producer.Flush(flushContext); err != nil {
		t.Errorf("flushing the producer: %v", err)
	}
	cancelFlush()
	if !phasesPassed {
		return
	}
	t.Logf("producer stopped: %s", outcomes.summary())

	var read []consumedRecord
	steps.step("read back after kills", true, func(t *testing.T) {
		total := endOffsetTotal(t, broker.Addr(), durabilityTopic)
		read = consumeWithFranzGo(t, broker.Addr(), durabilityTopic, roundTripPartitions, int(total))
		if int64(len(read)) != total {
			t.Errorf("read %d records, the end offsets add up to %d", len(read), total)
		}
	})
	acked, failed, unanswered := outcomes.results()
	if len(unanswered) > 0 {
		t.Errorf("%d values never got an answer from the producer, e.g. %q", len(unanswered), unanswered[0])
	}
	count := map[string]int{}
	for _, r := range read {
		count[string(r.Value)]++
	}
	steps.step("kill -9 x3: no acknowledged write lost", false, func(t *testing.T) {
		var lost []string
		for _, value := range acked {
			if count[value] == 0 {
				lost = append(lost, value)
			}
		}
		if len(lost) > 0 {
			t.Errorf("%d of %d acknowledged values are missing, e.g. %q", len(lost), len(acked), lost[:min(len(lost), problemsShownMax)])
		}
	})
	steps.step("kill -9 x3: no duplicates (idempotence)", false, func(t *testing.T) {
		sent := map[string]bool{}
		for _, value := range acked {
			sent[value] = true
		}
		for _, value := range failed {
			sent[value] = true
		}
		var found problems
		for _, value := range slices.Sorted(maps.Keys(count)) {
			switch {
			case !sent[value]:
				found.add("read %q, which was never produced", value)
			case count[value] > 1:
				found.add("read %q %d times", value, count[value])
			}
		}
		reportProblems(t, "duplicates", found)
	})
	t.Logf("read %d records; %d values acknowledged, %d failed", len(read), len(acked), len(failed))
}

// produceOutcomes tracks what the producer was told about each value.
// Callbacks arrive on kgo's goroutines, hence the mutex.
type produceOutcomes struct {
	mutex    sync.Mutex
	order    []string
	outcome  map[string]error // nil: acknowledged
	answered map[string]bool
	ackCount int
	// changed is closed and replaced whenever an acknowledgement
	// arrives, waking whoever waits for a count.
	changed chan struct{}
}

func newProduceOutcomes() *produceOutcomes {
	return &produceOutcomes{outcome: map[string]error{}, answered: map[string]bool{}, changed: make(chan struct{})}
}

func (o *produceOutcomes) sent(value string) {
	o.mutex.Lock()
	defer o.mutex.Unlock()
	o.order = append(o.order, value)
}

func (o *produceOutcomes) callback(value string) func(*kgo.Record, error) {
	return func(_ *kgo.Record, err error) {
		o.mutex.Lock()
		defer o.mutex.Unlock()
		if o.answered[value] {
			panic("compat: kgo answered a record twice: " + value)
		}
		o.answered[value] = true
		o.outcome[value] = err
		if err == nil {
			o.ackCount++
			close(o.changed)
			o.changed = make(chan struct{})
		}
	}
}

// waitForAcks waits until more further acknowledgements have arrived.
func (o *produceOutcomes) waitForAcks(t *testing.T, more int, phase string) {
	t.Helper()
	o.mutex.Lock()
	target := o.ackCount + more
	o.mutex.Unlock()
	timeout := time.NewTimer(durabilityPhaseTimeout)
	defer timeout.Stop()
	for {
		o.mutex.Lock()
		count, changed := o.ackCount, o.changed
		o.mutex.Unlock()
		if count >= target {
			return
		}
		select {
		case <-changed:
		case <-timeout.C:
			t.Fatalf("%s: %d acknowledgements after %v, want %d; %s", phase, count, durabilityPhaseTimeout, target, o.summary())
		}
	}
}

// results splits the values sent into acknowledged, failed (a produce
// cancelled before it was sent counts as failed) and never answered.
func (o *produceOutcomes) results() (acked, failed, unanswered []string) {
	o.mutex.Lock()
	defer o.mutex.Unlock()
	for _, value := range o.order {
		switch {
		case !o.answered[value]:
			unanswered = append(unanswered, value)
		case o.outcome[value] == nil:
			acked = append(acked, value)
		default:
			failed = append(failed, value)
		}
	}
	return acked, failed, unanswered
}

// summary counts the outcomes so far and names the errors seen.
func (o *produceOutcomes) summary() string {
	o.mutex.Lock()
	defer o.mutex.Unlock()
	errorsSeen := map[string]int{}
	for _, err := range o.outcome {
		if err != nil && !errors.Is(err, context.Canceled) {
			errorsSeen[err.Error()]++
		}
	}
	return fmt.Sprintf("%d sent, %d acknowledged, %d answered; errors %v", len(o.order), o.ackCount, len(o.answered), errorsSeen)
}

// endOffsetTotal adds up the end offsets of every partition of topic.
func endOffsetTotal(t *testing.T, address, topic string) int64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), clientTimeout)
	defer cancel()
	listed, err := kadm.NewClient(newFranzGoClient(t, address)).ListEndOffsets(ctx, topic)
	if err == nil {
		err = listed.Error()
	}
	if err != nil {
		t.Fatalf("ListEndOffsets: %v", err)
	}
	var total int64
	listed.Each(func(o kadm.ListedOffset) { total += o.Offset })
	return total
}
