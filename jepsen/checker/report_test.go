package checker

import (
	"strings"
	"testing"

	"sluice/jepsen/history"
)

// brokenHistory fails several checkers at once. (The log model does not
// require offsets to be contiguous, since Kafka's need not be, so the read
// that skips offset 1 is linearizable; internal-poll-skip catches it.)
func brokenHistory(t *testing.T) []history.Op {
	s := newScript(t)
	s.send(0, t0, "a", 0)
	s.send(0, t0, "b", 1)
	s.send(0, t0, "c", 2)
	s.send(0, t1, "d", 0)
	s.poll(1, pollOf(t0, 0, records(0, "a", 2, "c")))
	s.poll(2, pollOf(t1, 0, records(0, "x")))
	return s.ops()
}

func TestReportRendersStably(t *testing.T) {
	report := Check(brokenHistory(t), Options{LossPermitted: []history.TopicPartition{t1}})
	want := `verdict=fail ops=12 inconsistent-offsets=1(permitted=1) internal-poll-skip=1 lost-write=2(permitted=1) nonlinearizable-log=1(permitted=1)
inconsistent-offsets: count=1 failures=0 permitted=1 informational=0
  permitted t-1 ops=[7 11]: offset 0 holds 2 values: "d" (op 7), "x" (op 11)
internal-poll-skip: count=1 failures=1 permitted=0 informational=0
  failure t-0 ops=[9]: op 9 received offset 0 then offset 2, skipping known offset 1
lost-write: count=2 failures=1 permitted=1 informational=0
  failure t-0 ops=[3 9]: value "b" acknowledged at offset 1 by op 3 was never polled, though op 9 polled offset 2
  permitted t-1 ops=[7 11]: value "d" acknowledged at offset 0 by op 7 was never polled, though op 11 polled offset 0
nonlinearizable-log: count=1 failures=0 permitted=1 informational=0
  permitted t-1 ops=[11]: no linearization of its 2 operations exists; the longest linearizable prefix has 1; first left out: op 11 read 0:"x"
`
	if got := report.String(); got != want {
		t.Fatalf("report:\n%s\nwant:\n%s", got, want)
	}
	if report.Valid || report.Verdict != Fail || report.Failures() != 2 {
		t.Fatalf("verdict %s, valid %v, %d failures", report.Verdict, report.Valid, report.Failures())
	}
	if len(report.Classes) != len(ViolationOrder) {
		t.Fatalf("Check reported %d classes, want all %d", len(report.Classes), len(ViolationOrder))
	}
}

func TestReportsAreDeterministic(t *testing.T) {
	ops := brokenHistory(t)
	first := Check(ops, Options{}).String()
	for range 20 {
		if again := Check(ops, Options{}).String(); again != first {
			t.Fatalf("two checks of one history differ:\n%s\n%s", first, again)
		}
	}
}

func TestExamplesAreBoundedAndCountsAreNot(t *testing.T) {
	s := newScript(t)
	for offset := range int64(examplesMax + 5) {
		s.send(0, t0, "v"+string(rune('a'+offset)), offset)
	}
	report := CheckLostWrites(s.ops(), Options{FinalDrain: true})
	class, _ := report.Class(Unseen)
	if class.Count != examplesMax+5 || class.Failures != examplesMax+5 || len(class.Examples) != examplesMax {
		t.Fatalf("count %d, failures %d, %d examples", class.Count, class.Failures, len(class.Examples))
	}
	if !strings.Contains(report.String(), "... and 5 more") {
		t.Fatalf("rendering hides the remainder:\n%s", report)
	}
}

func TestMalformedHistoriesAndOptionsFail(t *testing.T) {
	s := newScript(t)
	s.send(0, t0, "a", 0)
	ops := s.ops()
	ops[1].Process = 7
	report := Check(ops, Options{})
	if report.Verdict != Fail || !strings.Contains(report.Error, "running nothing") {
		t.Fatalf("malformed history: %s", report.Summary())
	}
	if len(report.Classes) != len(ViolationOrder) {
		t.Fatalf("an error report should still list the classes it could not check")
	}
	report = Check(s.ops(), Options{SearchSteps: -1})
	if report.Verdict != Fail || !strings.Contains(report.Error, "negative") {
		t.Fatalf("bad options: %s", report.Summary())
	}
}

func TestCorrectHistoryPassesEveryChecker(t *testing.T) {
	s := newScript(t)
	s.send(0, t0, "a", 0)
	s.send(1, t1, "b", 0)
	s.send(0, t0, "c", 1)
	s.operation(2, history.FuncSubscribe, history.Payload{Topics: []string{"t"}},
		history.Payload{Group: "g", MemberID: "m", Generation: 1, Assigned: []history.TopicPartition{t0, t1}})
	s.poll(2, pollOf(t0, 0, records(0, "a", 1, "c")), pollOf(t1, 0, records(0, "b")))
	commit := history.Payload{Commits: []history.Commit{{Group: "g", Partition: t0, Offset: 2, Generation: 1}}}
	s.operation(2, history.FuncCommit, commit, history.Payload{})
	s.operation(3, history.FuncFetchCommitted, history.Payload{}, commit)
	s.poll(2, pollOf(t0, 2, nil), pollOf(t1, 1, nil))
	wantClean(t, Check(s.ops(), Options{FinalDrain: true}))
}
