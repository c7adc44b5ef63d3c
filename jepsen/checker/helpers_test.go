package checker

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"sluice/jepsen/history"
)

// script writes small histories for tests through the real Recorder, one
// tick of time per op, so expected op indexes are easy to follow.
type script struct {
	t        *testing.T
	recorder *history.Recorder
	now      int64
}

func newScript(t *testing.T) *script {
	s := &script{t: t}
	s.recorder = history.NewRecorder(func() int64 {
		s.now++
		return s.now
	})
	return s
}

var (
	t0 = history.TopicPartition{Topic: "t", Partition: 0}
	t1 = history.TopicPartition{Topic: "t", Partition: 1}
)

func (s *script) ops() []history.Op { return s.recorder.History() }

// last is the index of the op just recorded.
func (s *script) last() int { return s.recorder.Len() - 1 }

func (s *script) invoke(process int, f history.Func, payload history.Payload) *history.Pending {
	s.t.Helper()
	pending, err := s.recorder.Invoke(process, f, payload)
	if err != nil {
		s.t.Fatal(err)
	}
	return pending
}

// pendingSend is a send invoked but not completed.
type pendingSend struct {
	script  *script
	pending *history.Pending
}

// startSend invokes a send of values to one partition.
func (s *script) startSend(process int, tp history.TopicPartition, values ...string) pendingSend {
	s.t.Helper()
	var sends []history.Send
	for _, value := range values {
		sends = append(sends, history.Send{Partition: tp, Value: value, Offset: history.OffsetUnknown})
	}
	return pendingSend{s, s.invoke(process, history.FuncSend, history.Payload{Sends: sends})}
}

// ok acknowledges the send's values at offsets and returns the completion's
// index.
func (p pendingSend) ok(offsets ...int64) int {
	sends := p.pending.Invocation().Sends
	if len(offsets) != len(sends) {
		p.script.t.Fatalf("%d offsets for %d values", len(offsets), len(sends))
	}
	acknowledged := make([]history.Send, len(sends))
	for i, send := range sends {
		send.Offset = offsets[i]
		acknowledged[i] = send
	}
	p.pending.OK(history.Payload{Sends: acknowledged})
	return p.script.last()
}

func (p pendingSend) fail() int { p.pending.Fail("refused"); return p.script.last() }
func (p pendingSend) info() int { p.pending.Info("timed out"); return p.script.last() }

// send is a send acknowledged at once; it returns the completion's index.
func (s *script) send(process int, tp history.TopicPartition, value string, offset int64) int {
	s.t.Helper()
	return s.startSend(process, tp, value).ok(offset)
}

// records builds records from offset/value pairs: records(0, "a", 1, "b").
func records(pairs ...any) []history.Record {
	var list []history.Record
	for i := 0; i < len(pairs); i += 2 {
		list = append(list, history.Record{Offset: int64(pairs[i].(int)), Value: pairs[i+1].(string)})
	}
	return list
}

// pollOf is one partition's part of a poll.
func pollOf(tp history.TopicPartition, from int64, received []history.Record) history.Poll {
	return history.Poll{Partition: tp, From: from, Records: received}
}

// poll is a poll completed at once; it returns the completion's index.
func (s *script) poll(process int, polls ...history.Poll) int {
	s.t.Helper()
	s.invoke(process, history.FuncPoll, history.Payload{}).OK(history.Payload{Polls: polls})
	return s.last()
}

// operation runs any other operation to an ok completion.
func (s *script) operation(process int, f history.Func, invoke, results history.Payload) int {
	s.t.Helper()
	s.invoke(process, f, invoke).OK(results)
	return s.last()
}

// wantFindings asserts a report's findings of one anomaly: how many, their
// statuses, and the ops each names, in report order.
func wantFindings(t *testing.T, report Report, anomaly Anomaly, status Status, ops ...[]int) {
	t.Helper()
	class := checkedClass(t, report, anomaly)
	if class.Count != len(ops) {
		t.Fatalf("%s: %d findings, want %d:\n%s", anomaly, class.Count, len(ops), report)
	}
	var got [][]int
	for _, example := range class.Examples {
		if example.Status != status {
			t.Errorf("%s: status %s, want %s: %s", anomaly, example.Status, status, example)
		}
		got = append(got, example.Ops)
	}
	if diff := cmp.Diff(ops, got); diff != "" {
		t.Fatalf("%s ops (-want +got):\n%s\n%s", anomaly, diff, report)
	}
}

// checkedClass is the report's class of anomaly, failing the test if the
// report has an error or did not check it.
func checkedClass(t *testing.T, report Report, anomaly Anomaly) Class {
	t.Helper()
	if report.Error != "" {
		t.Fatalf("report error: %s", report.Error)
	}
	class, checked := report.Class(anomaly)
	if !checked {
		t.Fatalf("%s was not checked:\n%s", anomaly, report)
	}
	return class
}

// wantClean asserts a report found nothing at all and passed.
func wantClean(t *testing.T, report Report) {
	t.Helper()
	if report.Verdict != Pass || !report.Valid || report.Error != "" {
		t.Fatalf("want a clean pass:\n%s", report)
	}
	for _, class := range report.Classes {
		if class.Count != 0 {
			t.Fatalf("want no findings:\n%s", report)
		}
	}
}
