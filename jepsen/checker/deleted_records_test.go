package checker

import (
	"testing"

	"sluice/jepsen/history"
)

func TestDeletedRecordsServed(t *testing.T) {
	// Every op takes one tick of the script's clock: the sends are at 1-6,
	// so a DeleteRecords answered at 7 comes after them.
	written := func(s *script) {
		s.send(1, t0, "a", 0)
		s.send(1, t0, "b", 1)
		s.send(1, t1, "c", 0)
	}
	t.Run("reads before the answer, and above its low watermark, pass", func(t *testing.T) {
		s := newScript(t)
		written(s)
		s.poll(2, pollOf(t0, 0, records(0, "a", 1, "b")))                         // invoked at 7
		s.poll(2, pollOf(t0, 1, records(1, "b")), pollOf(t1, 0, records(0, "c"))) // at 9
		options := Options{DeletesAnswered: []DeleteAnswered{{Partition: t0, LowWatermark: 1, At: 8}}}
		wantFindings(t, CheckDeletedRecordsServed(s.ops(), options), DeletedRecordsServed, Failure)
	})
	t.Run("a record below the low watermark read after the answer", func(t *testing.T) {
		s := newScript(t)
		written(s)
		stale := s.poll(2, pollOf(t0, 0, records(0, "a", 1, "b")), pollOf(t1, 0, records(0, "c"))) // invoked at 7
		options := Options{DeletesAnswered: []DeleteAnswered{
			{Partition: t0, LowWatermark: 1, At: 3},
			{Partition: t0, LowWatermark: 0, At: 4}, // a lower answer after it changes nothing
			{Partition: t1, LowWatermark: 0, At: 5},
		}}
		report := CheckDeletedRecordsServed(s.ops(), options)
		wantFindings(t, report, DeletedRecordsServed, Failure, []int{stale})
	})
	t.Run("after an unclean election the same read is permitted, in that partition only", func(t *testing.T) {
		s := newScript(t)
		written(s)
		stale := s.poll(2, pollOf(t0, 0, records(0, "a", 1, "b")), pollOf(t1, 0, records(0, "c"))) // invoked at 7
		options := Options{
			DeletesAnswered: []DeleteAnswered{{Partition: t0, LowWatermark: 1, At: 3}, {Partition: t1, LowWatermark: 1, At: 3}},
			UncleanElected:  []history.TopicPartition{t0},
		}
		report := CheckDeletedRecordsServed(s.ops(), options)
		class := checkedClass(t, report, DeletedRecordsServed)
		if class.Count != 2 || class.Permitted != 1 || len(class.Examples) != 2 {
			t.Fatalf("want one permitted finding (t0) and one failure (t1):\n%s", report)
		}
		for _, example := range class.Examples {
			want := Failure
			if example.Partition == t0 {
				want = Permitted
			}
			if example.Status != want || example.Ops[0] != stale {
				t.Errorf("%s: status %s, want %s", example.Partition, example.Status, want)
			}
		}
	})
	t.Run("invalid answers are refused", func(t *testing.T) {
		s := newScript(t)
		written(s)
		report := Check(s.ops(), Options{DeletesAnswered: []DeleteAnswered{{Partition: history.TopicPartition{}, LowWatermark: 1}}})
		if report.Error == "" {
			t.Fatalf("an answer for no partition was accepted:\n%s", report)
		}
	})
}
