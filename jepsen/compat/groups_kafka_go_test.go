package compat

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"
)

// TestKafkaGoGroup: two kafka-go Readers with one GroupID (its default
// assignors, range then round-robin), each fetching messages and
// committing every one synchronously (CommitMessages, CommitInterval 0).
// kafka-go reports no assignments, so DescribeGroups says when the group
// is stable and who holds what; then records are produced. Each must be
// read exactly once, by the reader DescribeGroups named for its
// partition, with no rebalance meanwhile; after both close, FetchOffsets
// shows every record committed.
func TestKafkaGoGroup(t *testing.T) {
	t.Parallel()
	steps := newClientSteps(t, "kafka-go")
	broker := StartBroker(t, Options{})
	const topic, group = "kafka-go-group", "kafka-go-group"
	ledger := newGroupLedger()
	var readers []*kafkaGoGroupReader
	var owners map[int32]string // partition -> client id, from DescribeGroups
	var memberIDs []string
	test := t // the readers live as long as the test, not the step

	steps.step(groupJoinStep, true, func(t *testing.T) {
		createTopicWithFranzGo(t, broker.Addr(), topic, groupPartitions)
		for _, name := range []string{"K1", "K2"} {
			readers = append(readers, startKafkaGoGroupReader(test, []string{broker.Addr()}, group, topic, name, ledger))
		}
		d := waitForStableGroup(t, broker.Addr(), group, topic, len(readers), groupPartitions)
		matrix.record("kafka-go", groupAssignorRow, outcome(d.Protocol))
		owners = map[int32]string{}
		for member, partitions := range describedAssignment(t, d, topic) {
			for _, p := range partitions {
				owners[p] = member
			}
		}
		memberIDs = describedMemberIDs(d)
		t.Logf("DescribeGroups: protocol %s, assignment %v", d.Protocol, describedAssignment(t, d, topic))
	})
	steps.step(groupConsumeStep, true, func(t *testing.T) {
		defer func() {
			for _, r := range readers {
				r.reportErrors(t)
			}
		}()
		ledger.addProduced(produceToPartitions(t, broker.Addr(), topic, sameCount(groupPartitions, twoMemberRecordsPerPartition)))
		ledger.waitFor(t, "K1 and K2 to read every record", ledger.allReadLocked)
		reads := ledger.readsSnapshot()
		reportProblems(t, "delivery", checkExactlyOnce(ledger.producedSnapshot(), reads))
		var found problems
		for _, r := range reads {
			if owners[r.at.Partition] != r.member {
				found.add("%s read %v, but DescribeGroups assigned partition %d to %q", r.member, r.at, r.at.Partition, owners[r.at.Partition])
			}
		}
		reportProblems(t, "owners", found)
		d := describeGroup(t, broker.Addr(), group)
		if now := describedMemberIDs(d); d.State != "Stable" || !slices.Equal(now, memberIDs) {
			t.Errorf("the group changed while records flowed: now %s with members %v, before Stable with %v", d.State, now, memberIDs)
		}
	})
	steps.step(groupCommitsStep, false, func(t *testing.T) {
		for _, r := range readers {
			r.close() // leaves the group
		}
		checkCommitted(t, broker.Addr(), group, topic, endOffsetsOf(ledger.producedSnapshot()))
	})
}

// kafkaGoGroupReader is one kafka-go Reader in a group, fetching and
// committing in its own goroutine.
type kafkaGoGroupReader struct {
	name   string
	reader *kafka.Reader
	stop   context.CancelFunc
	done   chan struct{}
	closed bool

	mutex  sync.Mutex
	errors []error
}

// startKafkaGoGroupReader starts a reader that lives until close or until
// lifetime ends. Its client id is name, which DescribeGroups reports.
func startKafkaGoGroupReader(lifetime testing.TB, brokers []string, group, topic, name string, ledger *groupLedger) *kafkaGoGroupReader {
	r := &kafkaGoGroupReader{name: name, done: make(chan struct{})}
	r.reader = kafka.NewReader(kafka.ReaderConfig{
		Brokers:           brokers,
		GroupID:           group,
		Topic:             topic,
		Dialer:            &kafka.Dialer{ClientID: name, Timeout: clientTimeout},
		MinBytes:          1,
		MaxBytes:          kafkaGoFetchBytesMax,
		MaxWait:           100 * time.Millisecond,
		StartOffset:       kafka.FirstOffset,
		SessionTimeout:    groupSessionTimeout,
		HeartbeatInterval: groupHeartbeatInterval,
		RebalanceTimeout:  groupRebalanceTimeout,
		CommitInterval:    0, // CommitMessages commits before it returns
	})
	ctx, stop := context.WithCancel(context.Background())
	r.stop = stop
	go func() {
		defer close(r.done)
		for {
			message, err := r.reader.FetchMessage(ctx)
			if err != nil {
				if ctx.Err() == nil {
					r.fail(fmt.Errorf("FetchMessage: %w", err))
				}
				return
			}
			commitContext, cancel := context.WithTimeout(context.Background(), groupCommitTimeout)
			err = r.reader.CommitMessages(commitContext, message)
			cancel()
			if err != nil && !errors.Is(err, context.Canceled) {
				r.fail(fmt.Errorf("CommitMessages: %w", err))
			}
			ledger.read(name, false, groupRead{
				at:        partitionOffset{int32(message.Partition), message.Offset},
				value:     string(message.Value),
				committed: err == nil,
			})
		}
	}()
	lifetime.Cleanup(r.close)
	return r
}

func (r *kafkaGoGroupReader) fail(err error) {
	r.mutex.Lock()
	defer r.mutex.Unlock()
	r.errors = append(r.errors, err)
}

// logErrors logs the errors reported so far, for a test where some are
// expected (a broker was killed).
func (r *kafkaGoGroupReader) logErrors(t *testing.T) {
	t.Helper()
	r.mutex.Lock()
	defer r.mutex.Unlock()
	for _, err := range r.errors[:min(len(r.errors), problemsShownMax)] {
		t.Logf("reader %s: %v", r.name, err)
	}
}

func (r *kafkaGoGroupReader) reportErrors(t *testing.T) {
	t.Helper()
	r.mutex.Lock()
	defer r.mutex.Unlock()
	for _, err := range r.errors[:min(len(r.errors), problemsShownMax)] {
		t.Errorf("reader %s: %v", r.name, err)
	}
}

// close stops fetching and closes the reader, which leaves the group.
func (r *kafkaGoGroupReader) close() {
	if r.closed {
		return
	}
	r.closed = true
	r.stop()
	<-r.done
	if err := r.reader.Close(); err != nil {
		r.fail(fmt.Errorf("Close: %w", err))
	}
}
