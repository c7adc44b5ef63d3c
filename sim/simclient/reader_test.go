package simclient

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"sluice/core/batch"
	"sluice/core/broker"
	"sluice/jepsen/checker"
	"sluice/jepsen/history"
	"sluice/sim/simdisk"
)

func TestEmptyPollAtTheHighWatermarkRecordsItsPosition(t *testing.T) {
	c := newCluster(t, 5, simdisk.Faults{})
	reader := NewReader(c.client("r1"), ReaderConfig{FetchMaxWait: 50 * time.Millisecond}, c.recorder, c.processes)
	if err := reader.Assign([]history.TopicPartition{tp(0)}); err != nil {
		t.Fatal(err)
	}
	c.run(time.Second)
	polls := completions(c.recorder.History(), history.FuncPoll)
	if len(polls) == 0 {
		t.Fatal("no poll recorded on an empty partition")
	}
	for _, op := range polls {
		if op.Type != history.OK || len(op.Polls) != 1 {
			t.Fatalf("poll %+v, want ok with one partition", op)
		}
		if poll := op.Polls[0]; poll.From != 0 || len(poll.Records) != 0 || poll.Records == nil {
			t.Fatalf("poll %+v, want an empty poll from 0 (the log ends there)", poll)
		}
	}
}

func TestPositionBelowTheLogStartIsResetAndRecordedAsASeek(t *testing.T) {
	c := newCluster(t, 5, simdisk.Faults{}, withBrokerConfig(func(config *broker.Config) {
		config.TopicDefaults = map[string]string{"segment.bytes": "300", "retention.bytes": "600"}
		config.RetentionCheckInterval = 100 * time.Millisecond
	}))
	p := NewProducer(c.client("p1"), ProducerConfig{Acks: -1}, c.recorder, c.processes)
	c.sendAll(p, 0, "early", 2)
	reader := NewReader(c.client("r1"), ReaderConfig{}, c.recorder, c.processes)
	if err := reader.Assign([]history.TopicPartition{tp(0)}); err != nil {
		t.Fatal(err)
	}
	c.runUntil(time.Minute, "reading the early values", func() bool { return reader.Position(tp(0)) == 2 })
	reader.Stop()
	c.sendAll(p, 0, "late", 40)
	c.run(time.Second) // retention deletes the old segments
	drained := false
	reader.Drain(func() { drained = true })
	c.runUntil(time.Minute, "the drain", func() bool { return drained })

	ops := c.recorder.History()
	seeks := completions(ops, history.FuncSeek)
	if len(seeks) != 1 || seeks[0].Seeks[0].Offset <= 2 {
		t.Fatalf("seeks %+v, want one seek past the reader's old position 2", seeks)
	}
	if reader.Stats().OutOfRange != 1 {
		t.Fatalf("stats %+v, want one out-of-range answer", reader.Stats())
	}
	// Retention deleted acknowledged values, which the loss checks
	// would rightly flag; the order checks must see the jump forward to
	// the new earliest offset as a seek, not a poll skip.
	if report := checker.CheckPollOrder(ops, checker.Options{}); !report.Valid {
		t.Fatalf("checker: %s", report)
	}
}

func TestCrashWithAPollInFlightRecordsInfoAndStartsOver(t *testing.T) {
	c := newCluster(t, 5, simdisk.Faults{})
	client := c.client("r1")
	reader := NewReader(client, ReaderConfig{FetchMaxWait: time.Second}, c.recorder, c.processes)
	if err := reader.Assign([]history.TopicPartition{tp(0), tp(1)}); err != nil {
		t.Fatal(err)
	}
	// The partitions are empty, so the fetch long-polls for a second.
	c.runUntil(time.Minute, "a fetch in flight", func() bool { return reader.poll != nil })
	oldProcess := reader.process
	client.Crash()
	ops := c.recorder.History()
	if last := ops[len(ops)-1]; last.F != history.FuncPoll || last.Type != history.Info || last.Process != oldProcess {
		t.Fatalf("last op %+v, want the poll in flight completed as info", last)
	}
	client.Restart()
	c.run(100 * time.Millisecond)
	var assigns []history.Op
	for _, op := range completions(c.recorder.History(), history.FuncAssign) {
		assigns = append(assigns, op)
	}
	if len(assigns) != 2 || assigns[1].Process == oldProcess || len(assigns[1].Assigned) != 2 {
		t.Fatalf("assigns %+v, want the restart to assign both partitions again on a new process", assigns)
	}
}

func TestDecodeRecordsRefusesACorruptBatchAndIgnoresATornTail(t *testing.T) {
	var data []byte
	for i := range 3 {
		data = append(data, batch.Build(batch.Spec{
			BaseOffset: int64(i), ProducerID: batch.NoProducerID,
			Records: []batch.Record{{Key: []byte("k"), Value: []byte(fmt.Sprintf("v%d", i))}},
		})...)
	}
	records, next, err := decodeRecords(nil, nil, data, 1)
	if err != nil || next != 3 || len(records) != 2 || records[0].Value != "v1" || records[1].Offset != 2 {
		t.Fatalf("decode from 1: %+v next %d err %v, want v1 and v2 at 1 and 2, next 3", records, next, err)
	}
	records, next, err = decodeRecords(nil, nil, data[:len(data)-5], 0)
	if err != nil || next != 2 || len(records) != 2 {
		t.Fatalf("torn tail: %+v next %d err %v, want the two whole batches", records, next, err)
	}
	corrupt := append([]byte(nil), data...)
	corrupt[len(corrupt)-1] ^= 1
	if _, _, err := decodeRecords(nil, nil, corrupt, 0); !errors.Is(err, batch.ErrCRC) {
		t.Fatalf("corrupt batch: %v, want a CRC error", err)
	}
}

// A broker holds a Fetch for up to its max wait before it answers an
// empty one, so a fetch is never timed out before that wait and a margin
// have passed, whatever the request timeout (seed 361139: request timeout 500ms, max wait
// 498ms, and every idle long poll timed out, closing the connection the
// group's requests shared).
func TestAnIdleLongPollOutlastingTheRequestTimeoutIsNotTimedOut(t *testing.T) {
	c := newCluster(t, 7, simdisk.Faults{})
	client := c.client("r1", func(config *Config) { config.RequestTimeout = 400 * time.Millisecond })
	reader := NewReader(client, ReaderConfig{FetchMaxWait: 500 * time.Millisecond}, c.recorder, c.processes)
	if err := reader.Assign([]history.TopicPartition{tp(0)}); err != nil {
		t.Fatal(err)
	}
	c.run(5 * time.Second)
	polls := completions(c.recorder.History(), history.FuncPoll)
	if len(polls) < 5 {
		t.Fatalf("%d polls in 5s of 500ms long polls, want at least 5", len(polls))
	}
	for _, op := range polls {
		if op.Type != history.OK {
			t.Fatalf("poll %+v, want every idle long poll answered (empty)", op)
		}
	}
	if s := reader.Stats(); s.FetchesFailed != 0 {
		t.Fatalf("%d fetches failed", s.FetchesFailed)
	}
}
