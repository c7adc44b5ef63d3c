package checker

import (
	"testing"

	"sluice/jepsen/history"
)

func TestLostWrites(t *testing.T) {
	type expectation struct {
		anomaly Anomaly
		status  Status
		ops     [][]int
	}
	for _, test := range []struct {
		name    string
		options Options
		// build writes the history and returns what must be found.
		build func(s *script) []expectation
	}{
		{"every acknowledged value polled", Options{FinalDrain: true}, func(s *script) []expectation {
			s.send(0, t0, "a", 0)
			s.send(0, t0, "b", 1)
			s.poll(1, pollOf(t0, 0, records(0, "a", 1, "b")))
			return []expectation{{LostWrite, Failure, nil}, {Unseen, Failure, nil}}
		}},
		{"value below a polled offset never polled", Options{}, func(s *script) []expectation {
			s.send(0, t0, "a", 0)
			b := s.send(0, t0, "b", 1)
			s.send(0, t0, "c", 2)
			poll := s.poll(1, pollOf(t0, 0, records(0, "a", 2, "c")))
			return []expectation{{LostWrite, Failure, [][]int{{b, poll}}}, {Unseen, Failure, nil}}
		}},
		{"offset polled holding another value", Options{}, func(s *script) []expectation {
			a := s.send(0, t0, "a", 0)
			poll := s.poll(1, pollOf(t0, 0, records(0, "x")))
			return []expectation{{LostWrite, Failure, [][]int{{a, poll}}}, {Unseen, Failure, nil}}
		}},
		{"lost where loss is permitted", Options{LossPermitted: []history.TopicPartition{t0}}, func(s *script) []expectation {
			s.send(0, t0, "a", 0)
			b := s.send(0, t0, "b", 1)
			s.send(0, t0, "c", 2)
			poll := s.poll(1, pollOf(t0, 0, records(0, "a", 2, "c")))
			return []expectation{{LostWrite, Permitted, [][]int{{b, poll}}}}
		}},
		{"an acks=1 sender's value lost", Options{LossySenders: []int{0}, FinalDrain: true}, func(s *script) []expectation {
			s.send(2, t0, "a", 0)
			b := s.send(0, t0, "b", 1)
			s.send(2, t0, "c", 2)
			poll := s.poll(1, pollOf(t0, 0, records(0, "a", 2, "c")))
			return []expectation{{LostWrite, Permitted, [][]int{{b, poll}}}}
		}},
		{"an acks=all value lost beside an acks=1 sender", Options{LossySenders: []int{0}, FinalDrain: true}, func(s *script) []expectation {
			s.send(0, t0, "a", 0)
			b := s.send(2, t0, "b", 1)
			c := s.send(2, t0, "c", 2)
			poll := s.poll(1, pollOf(t0, 0, records(0, "a", 1, "x")))
			return []expectation{{LostWrite, Failure, [][]int{{b, poll}}}, {Unseen, Failure, [][]int{{c}}}}
		}},
		{"not yet polled, no final drain", Options{}, func(s *script) []expectation {
			s.send(0, t0, "a", 0)
			b := s.send(0, t0, "b", 1)
			s.poll(1, pollOf(t0, 0, records(0, "a")))
			return []expectation{{LostWrite, Failure, nil}, {Unseen, Informational, [][]int{{b}}}}
		}},
		{"never polled after a final drain", Options{FinalDrain: true}, func(s *script) []expectation {
			s.send(0, t0, "a", 0)
			b := s.send(0, t0, "b", 1)
			c := s.startSend(2, t1, "c").ok(-1)
			s.poll(1, pollOf(t0, 0, records(0, "a")))
			return []expectation{{LostWrite, Failure, nil}, {Unseen, Failure, [][]int{{b}, {c}}}}
		}},
		{"info and failed sends are never lost", Options{FinalDrain: true}, func(s *script) []expectation {
			s.startSend(0, t0, "a").info()
			s.startSend(1, t0, "b").fail()
			s.send(2, t0, "c", 0)
			s.poll(3, pollOf(t0, 0, records(0, "c")))
			return []expectation{{LostWrite, Failure, nil}, {Unseen, Failure, nil}}
		}},
	} {
		t.Run(test.name, func(t *testing.T) {
			s := newScript(t)
			expectations := test.build(s)
			report := CheckLostWrites(s.ops(), test.options)
			for _, want := range expectations {
				wantFindings(t, report, want.anomaly, want.status, want.ops...)
			}
		})
	}
}
