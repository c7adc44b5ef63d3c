package checker

import (
	"testing"

	"sluice/jepsen/history"

	"github.com/google/go-cmp/cmp"
)

// deletedBelow2 says retention deleted t0's records below offset 2.
var deletedBelow2 = []DeletedBelow{{Partition: t0, Offset: 2}}

func TestRetentionPermitsExactlyTheDeletedRecords(t *testing.T) {
	t.Run("an unseen write below the log start is deleted, not lost", func(t *testing.T) {
		s := newScript(t)
		a := s.send(0, t0, "a", 0)
		b := s.send(0, t0, "b", 1)
		s.send(0, t0, "c", 2)
		s.poll(1, pollOf(t0, 2, records(2, "c")))
		report := CheckLostWrites(s.ops(), Options{FinalDrain: true, Deleted: deletedBelow2})
		wantByStatus(t, report, LostWrite, Permitted, []int{a, s.last()}, []int{b, s.last()})
		wantByStatus(t, report, LostWrite, Failure)
		if _, _, failed := report.Violation(); failed {
			t.Fatalf("deleted records failed the check: %s", report.Summary())
		}
	})
	t.Run("an unseen write at the log start is lost", func(t *testing.T) {
		s := newScript(t)
		s.send(0, t0, "a", 0) // op 1
		s.send(0, t0, "b", 1) // op 3
		c := s.send(0, t0, "c", 2)
		s.send(0, t0, "d", 3)
		s.poll(1, pollOf(t0, 3, records(3, "d")))
		poll := s.last()
		report := CheckLostWrites(s.ops(), Options{FinalDrain: true, Deleted: deletedBelow2})
		wantByStatus(t, report, LostWrite, Failure, []int{c, poll})
		wantByStatus(t, report, LostWrite, Permitted, []int{1, poll}, []int{3, poll})
	})
	t.Run("a write polled past below the log start is deleted, not lost", func(t *testing.T) {
		s := newScript(t)
		s.send(0, t0, "a", 0)
		b := s.send(0, t0, "b", 1)
		s.send(0, t0, "c", 2)
		poll := s.poll(1, pollOf(t0, 0, records(0, "a", 2, "c")))
		report := CheckLostWrites(s.ops(), Options{FinalDrain: true, Deleted: deletedBelow2})
		wantFindings(t, report, LostWrite, Permitted, []int{b, poll})
	})
	t.Run("a poll skip inside the deleted range is permitted", func(t *testing.T) {
		s := newScript(t)
		s.send(0, t0, "a", 0)
		s.send(0, t0, "b", 1)
		s.send(0, t0, "c", 2)
		first := s.poll(1, pollOf(t0, 0, records(0, "a")))
		second := s.poll(1, pollOf(t0, 2, records(2, "c")))
		report := CheckPollOrder(s.ops(), Options{Deleted: deletedBelow2})
		wantByStatus(t, report, PollSkip, Permitted, []int{first, second})
		wantByStatus(t, report, PollSkip, Failure)
		if _, _, failed := report.Violation(); failed {
			t.Fatalf("a skip of deleted records failed the check: %s", report.Summary())
		}
	})
	t.Run("a poll skip reaching the log start fails", func(t *testing.T) {
		s := newScript(t)
		for i, value := range []string{"a", "b", "c", "d"} {
			s.send(0, t0, value, int64(i))
		}
		first := s.poll(1, pollOf(t0, 0, records(0, "a")))
		second := s.poll(1, pollOf(t0, 3, records(3, "d")))
		report := CheckPollOrder(s.ops(), Options{Deleted: deletedBelow2})
		wantFindings(t, report, PollSkip, Failure, []int{first, second})
	})
	t.Run("a skip inside one poll: permitted below the log start, failing above", func(t *testing.T) {
		s := newScript(t)
		for i, value := range []string{"a", "b", "c", "d", "e"} {
			s.send(0, t0, value, int64(i))
		}
		below := s.poll(1, pollOf(t0, 0, records(0, "a", 2, "c")))
		above := s.poll(2, pollOf(t0, 2, records(2, "c", 4, "e")))
		report := CheckInternalPollOrder(s.ops(), Options{Deleted: deletedBelow2})
		wantByStatus(t, report, InternalPollSkip, Permitted, []int{below})
		wantByStatus(t, report, InternalPollSkip, Failure, []int{above})
	})
	t.Run("a negative log start is refused", func(t *testing.T) {
		report := Check(nil, Options{Deleted: []DeletedBelow{{Partition: t0, Offset: -1}}})
		if report.Error == "" {
			t.Fatal("a negative log start was accepted")
		}
	})
}

// wantByStatus asserts the findings of anomaly with status, by their ops,
// in the report's order.
func wantByStatus(t *testing.T, report Report, anomaly Anomaly, status Status, ops ...[]int) {
	t.Helper()
	class := checkedClass(t, report, anomaly)
	var got [][]int
	for _, example := range class.Examples {
		if example.Status == status {
			got = append(got, example.Ops)
		}
	}
	if diff := cmp.Diff(ops, got); diff != "" {
		t.Fatalf("%s %s findings (-want +got):\n%s\n%s", anomaly, status, diff, report)
	}
}

// An idempotent send whose first copy landed, was deleted by retention
// before anyone read it, and was written again by a retry that reached a
// leader with no state for the producer: the log shows one record too many
// below the log start. Each send may have left one such copy.
func TestRetentionPermitsARetryWrittenAgainAfterItsUnseenFirstCopyWasDeleted(t *testing.T) {
	// retriedLog is gaps offsets nobody saw, then b, then x, which was
	// in flight all along; a poll reads b and x. It returns the ops a
	// finding names: b's and x's acknowledgements and the poll.
	retriedLog := func(t *testing.T, gaps int) ([]history.Op, []int) {
		s := newScript(t)
		x := s.startSend(1, t0, "x")
		b := s.send(0, t0, "b", int64(gaps))
		retried := x.ok(int64(gaps + 1))
		poll := s.poll(2, pollOf(t0, int64(gaps), records(gaps, "b", gaps+1, "x")))
		return s.ops(), []int{b, retried, poll}
	}
	for _, c := range []struct {
		name         string
		gaps         int
		deletedBelow int64 // 0: no deletion
		status       Status
	}{
		{"below the log start it is permitted", 1, 1, Permitted},
		{"a copy of each of two sends is permitted", 2, 2, Permitted},
		{"a third record from two sends fails", 3, 3, Failure},
		{"an extra record at the log start fails", 2, 1, Failure},
		{"without deletion it fails", 1, 0, Failure},
	} {
		t.Run(c.name, func(t *testing.T) {
			ops, named := retriedLog(t, c.gaps)
			var options Options
			if c.deletedBelow > 0 {
				options.Deleted = []DeletedBelow{{Partition: t0, Offset: c.deletedBelow}}
			}
			wantFindings(t, CheckLogLinearizability(ops, options), NonlinearizableLog, c.status, named)
		})
	}
}

// A send of unknown outcome nobody read may have been written, deleted
// and written again as an acknowledged one may: it offers a deleted copy
// too, besides the unseen append it may have made. Judging it more
// strictly than the same send acknowledged failed runs retention
// explains (found by review).
func TestRetentionPermitsADeletedCopyOfAnUnreadSendOfUnknownOutcome(t *testing.T) {
	for _, outcome := range []string{"unknown", "acknowledged without an offset"} {
		t.Run(outcome, func(t *testing.T) {
			s := newScript(t)
			u := s.startSend(0, t0, "u")
			if outcome == "unknown" {
				u.info()
			} else {
				u.ok(history.OffsetUnknown)
			}
			s.send(1, t0, "a", 3)
			s.poll(2, pollOf(t0, 3, records(3, "a")))
			report := CheckLogLinearizability(s.ops(), Options{Deleted: []DeletedBelow{{Partition: t0, Offset: 3}}})
			class, _ := report.Class(NonlinearizableLog)
			if class.Failures != 0 || class.Permitted != 1 {
				t.Fatalf("offsets 0-2 deleted, unseen: u's append, u's copy and a's copy fill them; want one permitted finding:\n%s", report)
			}
		})
	}
}
