package compat

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"sync"
	"testing"

	"github.com/IBM/sarama"
)

// TestSaramaGroup: two sarama ConsumerGroup members (its default range
// assignor) in one group, each a Consume loop that marks every message it
// handles (MarkMessage) and lets sarama commit the marks. Once both hold
// three partitions, records are produced; each must be read exactly once,
// by the member holding its partition, with no rebalance meanwhile; after
// both close, FetchOffsets shows every record committed.
func TestSaramaGroup(t *testing.T) {
	t.Parallel()
	steps := newClientSteps(t, "sarama")
	broker := StartBroker(t, Options{})
	const topic, group = "sarama-group", "sarama-group"
	ledger := newGroupLedger()
	var members []*saramaGroupMember
	var assignmentsBefore map[string]int
	test := t // the members live as long as the test, not the step

	steps.step(groupJoinStep, true, func(t *testing.T) {
		createTopicWithFranzGo(t, broker.Addr(), topic, groupPartitions)
		for _, name := range []string{"S1", "S2"} {
			members = append(members, startSaramaGroupMember(t, test, []string{broker.Addr()}, group, topic, name, ledger))
		}
		ledger.waitFor(t, "S1 and S2 to share the partitions", func() bool {
			return ledger.balancedAmongLocked(groupPartitions, "S1", "S2")
		})
		reportProblems(t, "assignment", ledger.violations())
		matrix.record("sarama", groupAssignorRow, outcome(describeGroup(t, broker.Addr(), group).Protocol))
		assignmentsBefore = ledger.assignmentsPerMember()
	})
	steps.step(groupConsumeStep, true, func(t *testing.T) {
		ledger.addProduced(produceToPartitions(t, broker.Addr(), topic, sameCount(groupPartitions, twoMemberRecordsPerPartition)))
		defer func() {
			for _, m := range members {
				m.reportErrors(t)
			}
		}()
		ledger.waitFor(t, "S1 and S2 to read every record", ledger.allReadLocked)
		reportProblems(t, "as it happened", ledger.violations())
		reportProblems(t, "delivery", checkExactlyOnce(ledger.producedSnapshot(), ledger.readsSnapshot()))
		if after := ledger.assignmentsPerMember(); !maps.Equal(after, assignmentsBefore) {
			t.Errorf("the group rebalanced while records flowed: assignments per member %v before, %v after", assignmentsBefore, after)
		}
	})
	steps.step(groupCommitsStep, false, func(t *testing.T) {
		for _, m := range members {
			m.close() // commits what it marked, then leaves
			m.reportErrors(t)
			m.forgetErrors()
		}
		checkCommitted(t, broker.Addr(), group, topic, endOffsetsOf(ledger.producedSnapshot()))
	})
}

// saramaGroupMember is one sarama ConsumerGroup running its Consume loop
// in a goroutine; it is also the loop's handler.
type saramaGroupMember struct {
	name   string
	topic  string
	ledger *groupLedger
	group  sarama.ConsumerGroup
	stop   context.CancelFunc
	done   chan struct{}
	closed bool

	mutex  sync.Mutex
	errors []error
}

// startSaramaGroupMember starts a member that lives until close or until
// lifetime ends; t is the step, which a failure to start fails.
func startSaramaGroupMember(t *testing.T, lifetime testing.TB, brokers []string, group, topic, name string, ledger *groupLedger) *saramaGroupMember {
	t.Helper()
	config := saramaConfig(sarama.CompressionNone)
	config.ClientID = name
	config.Consumer.Offsets.Initial = sarama.OffsetOldest
	config.Consumer.Group.Session.Timeout = groupSessionTimeout
	config.Consumer.Group.Heartbeat.Interval = groupHeartbeatInterval
	config.Consumer.Group.Rebalance.Timeout = groupRebalanceTimeout
	consumerGroup, err := sarama.NewConsumerGroup(brokers, group, config)
	if err != nil {
		t.Fatalf("sarama.NewConsumerGroup for %s: %v", name, err)
	}
	m := &saramaGroupMember{name: name, topic: topic, ledger: ledger, group: consumerGroup, done: make(chan struct{})}
	ctx, stop := context.WithCancel(context.Background())
	m.stop = stop
	go func() {
		for err := range consumerGroup.Errors() { // until Close
			m.fail(err)
		}
	}()
	go func() {
		defer close(m.done)
		// Consume returns at every rebalance; the loop joins again.
		for ctx.Err() == nil {
			if err := consumerGroup.Consume(ctx, []string{topic}, m); err != nil && ctx.Err() == nil {
				m.fail(fmt.Errorf("Consume: %w", err))
				if errors.Is(err, sarama.ErrClosedConsumerGroup) {
					return
				}
			}
		}
	}()
	lifetime.Cleanup(m.close)
	return m
}

// Setup runs when a rebalance has handed the member its claims.
func (m *saramaGroupMember) Setup(session sarama.ConsumerGroupSession) error {
	m.ledger.assigned(m.name, session.Claims()[m.topic])
	return nil
}

// Cleanup runs when the member's claims end, before it rejoins or leaves.
func (m *saramaGroupMember) Cleanup(session sarama.ConsumerGroupSession) error {
	m.ledger.revoked(m.name, session.Claims()[m.topic])
	return nil
}

// ConsumeClaim reads one claimed partition until the session ends. sarama
// commits marked offsets every second and when the member closes, so the
// ledger cannot tie a read to a commit: committed stays false.
func (m *saramaGroupMember) ConsumeClaim(session sarama.ConsumerGroupSession, claim sarama.ConsumerGroupClaim) error {
	for {
		select {
		case message, ok := <-claim.Messages():
			if !ok {
				return nil
			}
			m.ledger.read(m.name, true, groupRead{at: partitionOffset{message.Partition, message.Offset}, value: string(message.Value)})
			session.MarkMessage(message, "")
		case <-session.Context().Done():
			return nil
		}
	}
}

func (m *saramaGroupMember) fail(err error) {
	m.mutex.Lock()
	defer m.mutex.Unlock()
	m.errors = append(m.errors, err)
}

// logErrors logs the errors reported so far, for a test where some are
// expected (a broker was killed).
func (m *saramaGroupMember) logErrors(t *testing.T) {
	t.Helper()
	m.mutex.Lock()
	defer m.mutex.Unlock()
	for _, err := range m.errors[:min(len(m.errors), problemsShownMax)] {
		t.Logf("member %s: %v", m.name, err)
	}
}

func (m *saramaGroupMember) reportErrors(t *testing.T) {
	t.Helper()
	m.mutex.Lock()
	defer m.mutex.Unlock()
	for _, err := range m.errors[:min(len(m.errors), problemsShownMax)] {
		t.Errorf("member %s: %v", m.name, err)
	}
}

// forgetErrors drops the errors reported so far.
func (m *saramaGroupMember) forgetErrors() {
	m.mutex.Lock()
	defer m.mutex.Unlock()
	m.errors = nil
}

// close ends the Consume loop and closes the group, which commits the
// marked offsets and leaves.
func (m *saramaGroupMember) close() {
	if m.closed {
		return
	}
	m.closed = true
	m.stop()
	<-m.done
	if err := m.group.Close(); err != nil {
		m.fail(fmt.Errorf("Close: %w", err))
	}
}
