package checker

import (
	"testing"

	"sluice/jepsen/history"
)

func TestOrderCheckers(t *testing.T) {
	seekTo := func(tp history.TopicPartition, offset int64) history.Payload {
		return history.Payload{Seeks: []history.Seek{{Partition: tp, Offset: offset}}}
	}
	assign := history.Payload{Assigned: []history.TopicPartition{t0, t1}}
	for _, test := range []struct {
		name    string
		anomaly Anomaly
		check   func(ops []history.Op, options Options) Report
		// build writes the history and returns the ops of each finding.
		build func(s *script) [][]int
	}{
		{"sends advance", NonmonotonicSend, CheckNonmonotonicSends, func(s *script) [][]int {
			s.send(0, t0, "a", 3)
			s.send(0, t1, "b", 0) // another partition keeps its own order
			s.startSend(0, t0, "c", "d").ok(4, 9)
			s.send(1, t0, "e", 1) // another process keeps its own order
			return nil
		}},
		{"send goes back", NonmonotonicSend, CheckNonmonotonicSends, func(s *script) [][]int {
			first := s.send(0, t0, "a", 5)
			second := s.send(0, t0, "b", 3)
			return [][]int{{first, second}}
		}},
		{"send repeats an offset inside one operation", NonmonotonicSend, CheckNonmonotonicSends, func(s *script) [][]int {
			both := s.startSend(0, t0, "a", "b").ok(4, 4)
			return [][]int{{both}}
		}},
		{"polls advance", PollSkip, CheckPollOrder, func(s *script) [][]int {
			s.send(0, t0, "a", 0)
			s.send(0, t0, "b", 1)
			s.send(0, t0, "c", 2)
			s.poll(1, pollOf(t0, 0, records(0, "a")))
			s.poll(1, pollOf(t0, 1, nil)) // nothing received changes nothing
			s.poll(1, pollOf(t0, 1, records(1, "b", 2, "c")))
			return nil
		}},
		{"poll skips a known record", PollSkip, CheckPollOrder, func(s *script) [][]int {
			s.send(0, t0, "a", 0)
			s.send(0, t0, "b", 1)
			s.send(0, t0, "c", 2)
			first := s.poll(1, pollOf(t0, 0, records(0, "a")))
			second := s.poll(1, pollOf(t0, 2, records(2, "c")))
			return [][]int{{first, second}}
		}},
		{"poll jumps over offsets nobody saw", PollSkip, CheckPollOrder, func(s *script) [][]int {
			s.poll(1, pollOf(t0, 0, records(0, "a")))
			s.poll(1, pollOf(t0, 5, records(5, "f")))
			return nil
		}},
		{"poll goes back", NonmonotonicPoll, CheckPollOrder, func(s *script) [][]int {
			first := s.poll(1, pollOf(t0, 0, records(0, "a", 1, "b")))
			second := s.poll(1, pollOf(t0, 1, records(1, "b", 2, "c")))
			return [][]int{{first, second}}
		}},
		{"assign and subscribe allow going back", NonmonotonicPoll, CheckPollOrder, func(s *script) [][]int {
			s.poll(1, pollOf(t0, 0, records(0, "a", 1, "b")))
			s.operation(1, history.FuncAssign, assign, assign)
			s.poll(1, pollOf(t0, 0, records(0, "a", 1, "b")))
			s.operation(1, history.FuncSubscribe, history.Payload{Topics: []string{"t"}}, history.Payload{Group: "g", MemberID: "m", Generation: 1, Assigned: []history.TopicPartition{t0}})
			s.poll(1, pollOf(t0, 0, records(0, "a")))
			return nil
		}},
		{"seek allows going back in the partition it moves", NonmonotonicPoll, CheckPollOrder, func(s *script) [][]int {
			first := s.poll(1, pollOf(t0, 0, records(0, "a")), pollOf(t1, 0, records(0, "x")))
			s.operation(1, history.FuncSeek, seekTo(t0, 0), history.Payload{})
			s.poll(1, pollOf(t0, 0, records(0, "a")))
			stale := s.poll(1, pollOf(t1, 0, records(0, "x")))
			return [][]int{{first, stale}}
		}},
		{"other processes keep their own positions", NonmonotonicPoll, CheckPollOrder, func(s *script) [][]int {
			s.poll(1, pollOf(t0, 0, records(0, "a", 1, "b")))
			s.poll(2, pollOf(t0, 0, records(0, "a", 1, "b")))
			return nil
		}},
		{"records inside a poll advance", InternalPollSkip, CheckInternalPollOrder, func(s *script) [][]int {
			s.send(0, t0, "a", 0)
			s.poll(1, pollOf(t0, 0, records(0, "a", 1, "b", 5, "f")))
			return nil
		}},
		{"poll skips a known record inside", InternalPollSkip, CheckInternalPollOrder, func(s *script) [][]int {
			s.send(0, t0, "b", 1)
			poll := s.poll(1, pollOf(t0, 0, records(0, "a", 2, "c")))
			return [][]int{{poll}}
		}},
		{"poll skips the known record at its fetch position", InternalPollSkip, CheckInternalPollOrder, func(s *script) [][]int {
			s.send(0, t0, "a", 0)
			poll := s.poll(1, pollOf(t0, 0, records(1, "b")))
			return [][]int{{poll}}
		}},
		{"records inside a poll go back", InternalNonmonotonicPoll, CheckInternalPollOrder, func(s *script) [][]int {
			poll := s.poll(1, pollOf(t0, 0, records(0, "a", 1, "b", 1, "b")))
			return [][]int{{poll}}
		}},
		{"poll starts below its fetch position", InternalNonmonotonicPoll, CheckInternalPollOrder, func(s *script) [][]int {
			poll := s.poll(1, pollOf(t0, 3, records(2, "c", 3, "d")))
			return [][]int{{poll}}
		}},
	} {
		t.Run(test.name, func(t *testing.T) {
			s := newScript(t)
			want := test.build(s)
			wantFindings(t, test.check(s.ops(), Options{}), test.anomaly, Failure, want...)
		})
	}
}

// A consumer that had read past the end a truncation left (an unclean
// election) is sent back by its client's offset-out-of-range reset: where
// loss is permitted, going back is what it looks like, and permitted too.
func TestGoingBackIsPermittedWhereLossIs(t *testing.T) {
	permitted := Options{LossPermitted: []history.TopicPartition{t0}}
	s := newScript(t)
	first := s.poll(1, pollOf(t0, 0, records(0, "a", 1, "b")))
	again := s.poll(1, pollOf(t0, 0, records(0, "c")))
	wantFindings(t, CheckPollOrder(s.ops(), permitted), NonmonotonicPoll, Permitted, []int{first, again})

	s = newScript(t)
	reset := s.poll(1, pollOf(t0, 3, records(0, "c", 1, "d")))
	wantFindings(t, CheckInternalPollOrder(s.ops(), permitted), InternalNonmonotonicPoll, Permitted, []int{reset})

	s = newScript(t)
	inside := s.poll(1, pollOf(t0, 0, records(0, "a", 1, "b", 0, "c")))
	wantFindings(t, CheckInternalPollOrder(s.ops(), permitted), InternalNonmonotonicPoll, Permitted, []int{inside})
	// Elsewhere it stays a failure.
	wantFindings(t, CheckInternalPollOrder(s.ops(), Options{LossPermitted: []history.TopicPartition{t1}}), InternalNonmonotonicPoll, Failure, []int{inside})
}

func TestAbortedReads(t *testing.T) {
	s := newScript(t)
	failed := s.startSend(0, t0, "a").fail()
	s.startSend(1, t0, "b").info()
	s.send(2, t0, "c", 2)
	poll := s.poll(3, pollOf(t0, 0, records(0, "a", 1, "b", 2, "c")))
	wantFindings(t, CheckAbortedReads(s.ops(), Options{}), AbortedRead, Failure, []int{failed, poll})
}

func TestGroupOwnership(t *testing.T) {
	subscribe := func(s *script, process int, member string, generation int32, assigned ...history.TopicPartition) int {
		return s.operation(process, history.FuncSubscribe, history.Payload{Topics: []string{"t"}},
			history.Payload{Group: "g", MemberID: member, Generation: generation, Assigned: assigned})
	}
	t.Run("one owner per generation", func(t *testing.T) {
		s := newScript(t)
		subscribe(s, 1, "m1", 1, t0, t1)
		subscribe(s, 2, "m2", 2, t0)
		subscribe(s, 1, "m1", 2, t1)
		subscribe(s, 1, "m1", 2, t1) // the same member saying it twice
		wantFindings(t, CheckGroupOwnership(s.ops(), Options{}), GroupOwnership, Failure)
	})
	t.Run("two owners in one generation", func(t *testing.T) {
		s := newScript(t)
		first := subscribe(s, 1, "m1", 3, t0, t1)
		second := subscribe(s, 2, "m2", 3, t1)
		report := CheckGroupOwnership(s.ops(), Options{})
		wantFindings(t, report, GroupOwnership, Failure, []int{first, second})
		class, _ := report.Class(GroupOwnership)
		if got := class.Examples[0]; got.Group != "g" || got.Partition != t1 {
			t.Fatalf("finding names group %q, partition %s", got.Group, got.Partition)
		}
	})
}
