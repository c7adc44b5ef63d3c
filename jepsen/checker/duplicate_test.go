package checker

import (
	"slices"
	"testing"

	"sluice/jepsen/history"
)

func TestDuplicatesAndInconsistentOffsets(t *testing.T) {
	for _, test := range []struct {
		name    string
		anomaly Anomaly
		check   func(ops []history.Op, options Options) Report
		// build writes the history and returns the ops of each finding.
		build func(s *script) [][]int
	}{
		{"one value at one offset", Duplicate, CheckDuplicates, func(s *script) [][]int {
			s.send(0, t0, "a", 0)
			s.poll(1, pollOf(t0, 0, records(0, "a")))
			s.poll(2, pollOf(t0, 0, records(0, "a")))
			return nil
		}},
		{"value acknowledged at one offset, polled at another", Duplicate, CheckDuplicates, func(s *script) [][]int {
			a := s.send(0, t0, "a", 0)
			s.send(0, t0, "b", 1)
			poll := s.poll(1, pollOf(t0, 0, records(0, "x", 1, "b", 2, "a")))
			return [][]int{{a, poll}}
		}},
		{"value polled in two partitions", Duplicate, CheckDuplicates, func(s *script) [][]int {
			first := s.poll(1, pollOf(t0, 0, records(0, "a")))
			second := s.poll(2, pollOf(t1, 0, records(0, "a")))
			return [][]int{{first, second}}
		}},
		{"offsets agree", InconsistentOffsets, CheckInconsistentOffsets, func(s *script) [][]int {
			s.send(0, t0, "a", 0)
			s.send(0, t1, "b", 0)
			s.poll(1, pollOf(t0, 0, records(0, "a")), pollOf(t1, 0, records(0, "b")))
			return nil
		}},
		{"acknowledgement and poll disagree", InconsistentOffsets, CheckInconsistentOffsets, func(s *script) [][]int {
			a := s.send(0, t0, "a", 0)
			poll := s.poll(1, pollOf(t0, 0, records(0, "b")))
			return [][]int{{a, poll}}
		}},
		{"two polls disagree", InconsistentOffsets, CheckInconsistentOffsets, func(s *script) [][]int {
			first := s.poll(1, pollOf(t0, 3, records(3, "a")))
			second := s.poll(2, pollOf(t0, 3, records(3, "b")))
			s.poll(3, pollOf(t0, 3, records(3, "b")))
			return [][]int{{first, second, second + 2}}
		}},
		{"two acknowledgements disagree", InconsistentOffsets, CheckInconsistentOffsets, func(s *script) [][]int {
			a := s.send(0, t0, "a", 5)
			b := s.send(1, t0, "b", 5)
			return [][]int{{a, b}}
		}},
	} {
		t.Run(test.name, func(t *testing.T) {
			s := newScript(t)
			want := test.build(s)
			wantFindings(t, test.check(s.ops(), Options{}), test.anomaly, Failure, want...)
		})
	}
}

func TestInconsistentOffsetsArePermittedWhereLossIs(t *testing.T) {
	s := newScript(t)
	a := s.send(0, t0, "a", 0)
	b := s.send(1, t0, "b", 0)
	report := CheckInconsistentOffsets(s.ops(), Options{LossPermitted: []history.TopicPartition{t0}})
	wantFindings(t, report, InconsistentOffsets, Permitted, []int{a, b})
	if !report.Valid {
		t.Fatalf("permitted findings failed the run:\n%s", report)
	}
}

// An acks=1 sender's write lost and its offset taken by another's: the
// reuse is the loss's consequence, permitted in every partition a lossy
// sender wrote, and a failure in one it did not.
func TestInconsistentOffsetsArePermittedWhereALossySenderWrote(t *testing.T) {
	s := newScript(t)
	a := s.send(0, t0, "a", 0)
	b := s.send(1, t0, "b", 0)
	c := s.send(2, t1, "c", 0)
	d := s.send(3, t1, "d", 0)
	report := CheckInconsistentOffsets(s.ops(), Options{LossySenders: []int{0}})
	class := checkedClass(t, report, InconsistentOffsets)
	var permitted, failed [][]int
	for _, finding := range class.Examples {
		switch finding.Status {
		case Permitted:
			permitted = append(permitted, finding.Ops)
		case Failure:
			failed = append(failed, finding.Ops)
		}
	}
	if !slices.EqualFunc(permitted, [][]int{{a, b}}, slices.Equal) || !slices.EqualFunc(failed, [][]int{{c, d}}, slices.Equal) {
		t.Fatalf("permitted %v, failed %v; want [[%d %d]] and [[%d %d]]:\n%s", permitted, failed, a, b, c, d, report)
	}
}

// A record read at offset 3, lost with the log (and the producer's
// idempotence state), retried and written again at 0 of the rebuilt log:
// where loss is permitted that duplicate is its consequence, as long as
// offset 3 now holds something else. Anywhere else, or with both copies
// still standing, it is a failure.
func TestDuplicateLeftByLossIsPermittedWhereLossIs(t *testing.T) {
	permitted := Options{LossPermitted: []history.TopicPartition{t0}}
	lost := func(s *script, overwrite bool) []int {
		before := s.poll(1, pollOf(t0, 3, records(3, "a")))
		var after []int
		if overwrite {
			after = append(after, s.poll(2, pollOf(t0, 0, records(0, "a", 1, "b", 2, "c", 3, "d"))))
		} else {
			after = append(after, s.poll(2, pollOf(t0, 0, records(0, "a"))))
		}
		return append(after, before)
	}
	t.Run("overwritten, loss permitted", func(t *testing.T) {
		s := newScript(t)
		ops := lost(s, true)
		wantFindings(t, CheckDuplicates(s.ops(), permitted), Duplicate, Permitted, []int{ops[1], ops[0]})
	})
	t.Run("overwritten, loss not permitted", func(t *testing.T) {
		s := newScript(t)
		ops := lost(s, true)
		wantFindings(t, CheckDuplicates(s.ops(), Options{}), Duplicate, Failure, []int{ops[1], ops[0]})
	})
	t.Run("both copies standing, loss permitted", func(t *testing.T) {
		s := newScript(t)
		ops := lost(s, false)
		wantFindings(t, CheckDuplicates(s.ops(), permitted), Duplicate, Failure, []int{ops[1], ops[0]})
	})
}

// A record read at offset 3, then deleted (DeleteRecords, retention) and
// the producer's idempotence state with it, retried and written again at
// 5: the deletion explains that duplicate, loss permitted or not. One
// whose earlier copy still stands above the deleted offset is a failure.
func TestDuplicateLeftByDeletionIsPermitted(t *testing.T) {
	retried := func(s *script) []int {
		before := s.poll(1, pollOf(t0, 3, records(3, "a")))
		after := s.poll(2, pollOf(t0, 5, records(5, "a")))
		return []int{before, after}
	}
	t.Run("below the deleted offset", func(t *testing.T) {
		s := newScript(t)
		ops := retried(s)
		options := Options{Deleted: []DeletedBelow{{Partition: t0, Offset: 4}}}
		wantFindings(t, CheckDuplicates(s.ops(), options), Duplicate, Permitted, ops)
	})
	t.Run("above the deleted offset", func(t *testing.T) {
		s := newScript(t)
		ops := retried(s)
		options := Options{Deleted: []DeletedBelow{{Partition: t0, Offset: 3}}}
		wantFindings(t, CheckDuplicates(s.ops(), options), Duplicate, Failure, ops)
	})
	// The retry is written again only once its first copy is gone: one
	// answer holding both copies shows they stood at once (found by
	// review).
	t.Run("both copies in one answer", func(t *testing.T) {
		s := newScript(t)
		both := s.poll(1, pollOf(t0, 3, records(3, "a", 4, "b", 5, "a")))
		options := Options{Deleted: []DeletedBelow{{Partition: t0, Offset: 4}}}
		wantFindings(t, CheckDuplicates(s.ops(), options), Duplicate, Failure, []int{both})
	})
	// A producer takes its last attempt's answer: the deleted lower
	// copy cannot be the acknowledged one (found by review).
	t.Run("acknowledged at the deleted copy", func(t *testing.T) {
		s := newScript(t)
		acknowledged := s.send(0, t0, "a", 3)
		read := s.poll(1, pollOf(t0, 5, records(5, "a")))
		options := Options{Deleted: []DeletedBelow{{Partition: t0, Offset: 4}}}
		wantFindings(t, CheckDuplicates(s.ops(), options), Duplicate, Failure, []int{acknowledged, read})
	})
}
