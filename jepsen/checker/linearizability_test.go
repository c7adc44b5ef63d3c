package checker

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"sluice/jepsen/history"
)

func TestLogLinearizability(t *testing.T) {
	for _, test := range []struct {
		name string
		// build writes the history and returns the ops porcupine should
		// name as left out of the longest linearizable prefix, nil if the
		// history is linearizable.
		build func(s *script) []int
	}{
		{"a read sees a value not yet appended", func(s *script) []int {
			poll := s.poll(1, pollOf(t0, 0, records(0, "a")))
			send := s.send(0, t0, "a", 0)
			return []int{poll, send}
		}},
		{"an acknowledged append is lost", func(s *script) []int {
			s.send(0, t0, "a", 0)
			poll := s.poll(1, pollOf(t0, 0, nil))
			return []int{poll}
		}},
		{"an append read before its acknowledgement is fine", func(s *script) []int {
			send := s.startSend(0, t0, "a")
			s.poll(1, pollOf(t0, 0, records(0, "a")))
			send.ok(0)
			return nil
		}},
		{"acknowledged appends out of real-time order", func(s *script) []int {
			a := s.send(0, t0, "a", 1)
			b := s.send(1, t0, "b", 0)
			return []int{a, b}
		}},
		{"a read misses an acknowledged append", func(s *script) []int {
			s.send(0, t0, "a", 0)
			s.send(0, t0, "b", 1)
			poll := s.poll(1, pollOf(t0, 1, nil))
			return []int{poll}
		}},
		{"concurrent appends in one order", func(s *script) []int {
			a := s.startSend(0, t0, "a")
			b := s.startSend(1, t0, "b")
			a.ok(0)
			b.ok(1)
			s.poll(2, pollOf(t0, 0, records(0, "a", 1, "b")))
			return nil
		}},
		{"concurrent appends in the other order", func(s *script) []int {
			a := s.startSend(0, t0, "a")
			b := s.startSend(1, t0, "b")
			a.ok(1)
			b.ok(0)
			s.poll(2, pollOf(t0, 0, records(0, "b", 1, "a")))
			return nil
		}},
		{"an unknown append that never shows", func(s *script) []int {
			s.startSend(0, t0, "a").info()
			s.send(1, t0, "b", 0)
			s.poll(2, pollOf(t0, 0, records(0, "b")))
			s.poll(2, pollOf(t0, 1, nil))
			return nil
		}},
		{"an unknown append that shows", func(s *script) []int {
			s.startSend(0, t0, "a").info()
			s.poll(2, pollOf(t0, 0, records(0, "a")))
			s.send(1, t0, "b", 1)
			s.poll(2, pollOf(t0, 1, records(1, "b")))
			return nil
		}},
		{"an unobserved unknown append fills a gap", func(s *script) []int {
			s.startSend(0, t0, "a").info()
			s.send(1, t0, "b", 1)
			s.poll(2, pollOf(t0, 1, records(1, "b")))
			return nil
		}},
		{"an unknown append invoked too late cannot fill a gap", func(s *script) []int {
			b := s.send(1, t0, "b", 1)
			a := s.startSend(0, t0, "a").info()
			return []int{b, a}
		}},
		{"one unknown append cannot fill two gaps", func(s *script) []int {
			s.startSend(0, t0, "a").info()
			c := s.send(1, t0, "c", 2)
			return []int{c}
		}},
		{"a gap is not a value anyone can read", func(s *script) []int {
			s.startSend(0, t0, "a").info()
			b := s.send(1, t0, "b", 1)
			poll := s.poll(2, pollOf(t0, 0, records(0, "a?")))
			return []int{b, poll}
		}},
		{"an append still running when the history ends shows", func(s *script) []int {
			s.startSend(0, t0, "a")
			s.poll(2, pollOf(t0, 0, records(0, "a")))
			return nil
		}},
		{"an append with an unknown offset", func(s *script) []int {
			s.startSend(0, t0, "a").ok(history.OffsetUnknown)
			s.poll(2, pollOf(t0, 0, records(0, "a")))
			return nil
		}},
		{"a failed append never happened", func(s *script) []int {
			s.startSend(0, t0, "a").fail()
			s.send(1, t0, "b", 0)
			return nil
		}},
		{"partitions are separate logs", func(s *script) []int {
			s.send(0, t0, "a", 0)
			s.send(0, t1, "b", 0)
			s.poll(1, pollOf(t0, 0, records(0, "a")), pollOf(t1, 0, records(0, "b")))
			return nil
		}},
	} {
		t.Run(test.name, func(t *testing.T) {
			s := newScript(t)
			leftOut := test.build(s)
			report := CheckLogLinearizability(s.ops(), Options{})
			if leftOut == nil {
				wantClean(t, report)
				return
			}
			wantFindings(t, report, NonlinearizableLog, Failure, leftOut)
		})
	}
}

func TestLogLinearizabilityIsPermittedWhereLossIs(t *testing.T) {
	s := newScript(t)
	s.send(0, t0, "a", 0)
	poll := s.poll(1, pollOf(t0, 0, nil))
	report := CheckLogLinearizability(s.ops(), Options{LossPermitted: []history.TopicPartition{t0}})
	wantFindings(t, report, NonlinearizableLog, Permitted, []int{poll})
	if report.Verdict != Pass {
		t.Fatalf("permitted loss failed the run:\n%s", report)
	}
}

// An idempotent send whose first copy (at 1) was read, then deleted with
// the producer's state, is written again by its retry (at 3): the first
// search cannot place one value twice; the one allowing deleted copies
// places the retry's copy at each offset it was seen at, and the log is
// permitted (the duplicate check judges the duplicate itself). Without
// the deletion it is a failure.
func TestLogLinearizabilityDefersToADuplicateDeletionExplains(t *testing.T) {
	build := func(s *script) { retriedPastDeletion(s, 3) }
	s := newScript(t)
	build(s)
	deleted := Options{Deleted: []DeletedBelow{{Partition: t0, Offset: 2}}}
	report := Check(s.ops(), deleted)
	if report.Verdict != Pass {
		t.Fatalf("a duplicate the deletion explains failed the run:\n%s", report)
	}
	if class, _ := report.Class(NonlinearizableLog); class.Permitted != 1 {
		t.Fatalf("want one permitted nonlinearizable-log finding:\n%s", report)
	}
	// Later deletions may take the second copy too.
	s = newScript(t)
	build(s)
	if report := Check(s.ops(), Options{Deleted: []DeletedBelow{{Partition: t0, Offset: 4}}}); report.Verdict != Pass {
		t.Fatalf("with both copies deleted since, the run failed:\n%s", report)
	}
	s = newScript(t)
	build(s)
	if report := Check(s.ops(), Options{}); report.Verdict == Pass {
		t.Fatalf("without a deletion the duplicate passed:\n%s", report)
	}
}

// A value written again past a deletion explains its own copies, not the
// rest of the log: here the retry lands at 4 and nothing anyone sent can
// be at 3. (The log was once permitted whole as soon as one value was
// duplicated past a deletion; found by review.)
func TestADuplicatePastADeletionExcusesNothingElse(t *testing.T) {
	s := newScript(t)
	retriedPastDeletion(s, 4)
	report := CheckLogLinearizability(s.ops(), Options{Deleted: []DeletedBelow{{Partition: t0, Offset: 2}}})
	if class, _ := report.Class(NonlinearizableLog); class.Failures != 1 {
		t.Fatalf("want the record at 3 that nobody sent found:\n%s", report)
	}
}

// retriedPastDeletion writes x at 0 and y at 2, and a, read at 1 (its
// first copy) and acknowledged at retryAt: the log of a retry written
// again once deletion below 2 took a's first copy.
func retriedPastDeletion(s *script, retryAt int) {
	s.send(0, t0, "x", 0)
	retried := s.startSend(1, t0, "a")
	s.poll(2, pollOf(t0, 0, records(0, "x", 1, "a")))
	s.send(0, t0, "y", 2)
	retried.ok(int64(retryAt))
	s.poll(2, pollOf(t0, 2, records(2, "y", retryAt, "a")))
}

// A producer takes its last attempt's answer, so a value acknowledged at
// its lower copy and read at a higher one is not a retry written again
// past a deletion (found by review).
func TestADuplicatePastADeletionIsNotAcknowledgedAtItsLowerCopy(t *testing.T) {
	s := newScript(t)
	s.send(0, t0, "a", 0)
	s.poll(1, pollOf(t0, 1, records(1, "a")))
	report := CheckLogLinearizability(s.ops(), Options{Deleted: []DeletedBelow{{Partition: t0, Offset: 1}}})
	if class, _ := report.Class(NonlinearizableLog); class.Failures != 1 {
		t.Fatalf("want a read at 1 of a value acknowledged at 0 found:\n%s", report)
	}
}

func TestCommittedOffsets(t *testing.T) {
	commitOf := func(offset int64) history.Payload {
		return history.Payload{Commits: []history.Commit{{Group: "g", Partition: t0, Offset: offset}}}
	}
	fetch := func(s *script, process int, offset int64) int {
		return s.operation(process, history.FuncFetchCommitted, commitOf(history.OffsetUnknown), commitOf(offset))
	}
	commit := func(s *script, process int, offset int64) int {
		return s.operation(process, history.FuncCommit, commitOf(offset), history.Payload{})
	}
	for _, test := range []struct {
		name  string
		build func(s *script) []int
	}{
		{"reads follow commits", func(s *script) []int {
			fetch(s, 1, history.OffsetUnknown)
			commit(s, 0, 5)
			fetch(s, 1, 5)
			commit(s, 0, 7)
			fetch(s, 2, 7)
			return nil
		}},
		{"a read returns an overwritten offset", func(s *script) []int {
			commit(s, 0, 5)
			commit(s, 0, 7)
			return []int{fetch(s, 1, 5)}
		}},
		{"a read forgets a commit", func(s *script) []int {
			commit(s, 0, 5)
			return []int{fetch(s, 1, history.OffsetUnknown)}
		}},
		{"an unknown commit may show", func(s *script) []int {
			s.invoke(0, history.FuncCommit, commitOf(9)).Info("timed out")
			fetch(s, 1, 9)
			return nil
		}},
		{"an unknown commit may never show", func(s *script) []int {
			commit(s, 0, 5)
			s.invoke(1, history.FuncCommit, commitOf(9)).Info("timed out")
			fetch(s, 2, 5)
			return nil
		}},
		{"a failed commit never shows", func(s *script) []int {
			commit(s, 0, 5)
			s.invoke(1, history.FuncCommit, commitOf(9)).Fail("stale generation")
			return []int{fetch(s, 2, 9)}
		}},
	} {
		t.Run(test.name, func(t *testing.T) {
			s := newScript(t)
			leftOut := test.build(s)
			report := CheckCommittedOffsets(s.ops(), Options{})
			if leftOut == nil {
				wantClean(t, report)
				return
			}
			wantFindings(t, report, NonlinearizableCommittedOffset, Failure, leftOut)
		})
	}
}

// hardToLinearize is a history whose search explores every order of many
// concurrent appends with unknown offsets before it can conclude that a
// read of a value nobody sent is impossible: far more than a millisecond
// of work.
func hardToLinearize(t *testing.T) []history.Op {
	s := newScript(t)
	var sends []pendingSend
	for process := range 14 {
		sends = append(sends, s.startSend(process, t0, fmt.Sprintf("v%d", process)))
	}
	for _, send := range sends {
		send.ok(history.OffsetUnknown)
	}
	s.poll(99, pollOf(t0, 0, records(0, "never-sent")))
	return s.ops()
}

func TestExhaustedBudgetIsInconclusiveNeverAPass(t *testing.T) {
	report := CheckLogLinearizability(hardToLinearize(t), Options{SearchSteps: 1000})
	if report.Verdict != Unknown || report.Valid {
		t.Fatalf("want verdict unknown:\n%s", report)
	}
	if len(report.Inconclusive) != 1 || report.Inconclusive[0].Partition != t0 ||
		report.Inconclusive[0].Anomaly != NonlinearizableLog {
		t.Fatalf("want one inconclusive check of %s:\n%s", t0, report)
	}
	if !strings.Contains(report.Summary(), "inconclusive=1") {
		t.Fatalf("summary hides the inconclusive check: %s", report.Summary())
	}
}

// Where losing acknowledged writes is permitted (acks=1, an unclean
// election), a log that does not linearize is permitted too, so a search
// that runs out of budget there could not have failed the run: it is a
// permitted finding, not an inconclusive check (cluster seed 4185034, an
// acks=1 partition of batched sends whose search ran out).
func TestExhaustedBudgetWhereLossIsPermittedIsNotInconclusive(t *testing.T) {
	report := CheckLogLinearizability(hardToLinearize(t), Options{SearchSteps: 1000, LossPermitted: []history.TopicPartition{t0}})
	if report.Verdict == Unknown || !report.Valid || len(report.Inconclusive) != 0 {
		t.Fatalf("want a valid verdict with nothing inconclusive:\n%s", report)
	}
	class, _ := report.Class(NonlinearizableLog)
	if class.Permitted != 1 || class.Failures != 0 || len(class.Examples) != 1 || !strings.Contains(class.Examples[0].Detail, "could not fail the run") {
		t.Fatalf("want one permitted nonlinearizable-log finding, from the search that ran out:\n%s", report)
	}
}

// A batch of unknown outcome written twice has every record read at two
// offsets: free to land anywhere, they are one append of consecutive
// values, not one per record, or porcupine would try every order of the
// batch's records (12! here, next to the other sends') before it could
// conclude that the second copy does not fit one append per value.
func TestABatchWrittenTwiceIsSearchedAsOneAppend(t *testing.T) {
	s := newScript(t)
	var values []string
	for i := range 12 {
		values = append(values, fmt.Sprintf("b%d", i))
	}
	batch := s.startSend(0, t0, values...)
	var others []pendingSend
	for process := 1; process <= 4; process++ {
		others = append(others, s.startSend(process, t0, fmt.Sprintf("v%d", process)))
	}
	batch.info()
	for _, send := range others {
		send.info()
	}
	var copies []any
	for copy := range 2 {
		for i, v := range values {
			copies = append(copies, copy*12+i, v)
		}
	}
	s.poll(99, pollOf(t0, 0, records(copies...)))
	report := CheckLogLinearizability(s.ops(), Options{})
	if report.Verdict == Unknown || len(report.Inconclusive) != 0 {
		t.Fatalf("the search ran out:\n%s", report)
	}
	class, _ := report.Class(NonlinearizableLog)
	if class.Failures != 1 {
		t.Fatalf("want the second copy found not to fit:\n%s", report)
	}
}

// An acknowledged batch's records land together at their consecutive
// offsets, searched as one append beside sends of unknown outcome never
// read. (This small case linearizes either way; the search that ran out
// of budget with one append per record is cluster seed 4304799's.)
func TestAnAcknowledgedBatchLinearizesBesideUnreadSends(t *testing.T) {
	s := newScript(t)
	var values []string
	var read []any
	for i := range 12 {
		values = append(values, fmt.Sprintf("b%d", i))
		read = append(read, i, values[i])
	}
	batch := s.startSend(0, t0, values...)
	var unread []pendingSend
	for process := 1; process <= 12; process++ {
		unread = append(unread, s.startSend(process, t0, fmt.Sprintf("lost%d", process)))
	}
	offsets := make([]int64, len(values))
	for i := range offsets {
		offsets[i] = int64(i)
	}
	batch.ok(offsets...)
	for _, send := range unread {
		send.info()
	}
	s.poll(99, pollOf(t0, 0, records(read...)))
	report := CheckLogLinearizability(s.ops(), Options{})
	if report.Verdict != Pass || len(report.Inconclusive) != 0 {
		t.Fatalf("want the batch linearized:\n%s", report)
	}
}

func TestVisualizeLogWritesAPage(t *testing.T) {
	s := newScript(t)
	s.send(0, t0, "a", 0)
	s.poll(1, pollOf(t0, 0, nil))
	var page bytes.Buffer
	if err := VisualizeLog(s.ops(), t0, Options{}, &page); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"<html", `append \"a\" at 0`, "read nothing from 0"} {
		if !strings.Contains(page.String(), want) {
			t.Errorf("visualization lacks %q", want)
		}
	}
	if err := VisualizeLog(s.ops(), t1, Options{}, &page); err == nil {
		t.Error("visualized a partition the history never touches")
	}
}

func TestVisualizeCommittedOffsetWritesAPage(t *testing.T) {
	s := newScript(t)
	commit := history.Payload{Commits: []history.Commit{{Group: "g", Partition: t0, Offset: 5}}}
	s.operation(0, history.FuncCommit, commit, history.Payload{})
	var page bytes.Buffer
	if err := VisualizeCommittedOffset(s.ops(), "g", t0, Options{}, &page); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(page.String(), "commit 5") {
		t.Error("visualization lacks the commit")
	}
	if err := VisualizeCommittedOffset(s.ops(), "other", t0, Options{}, &page); err == nil {
		t.Error("visualized a group the history never touches")
	}
}
