package checker

import (
	"bytes"
	"slices"
	"testing"

	"pgregory.net/rapid"

	"sluice/jepsen/history"
)

// TestCorrectHistoriesPassAndCorruptedOnesFail: any history of a correct
// single-partition log passes every checker, with or without a final
// drain; changing one observation in it (swapping two polled values whose
// offsets sends acknowledged, or dropping a polled record that is not its
// poll's last) makes some checker fail it.
func TestCorrectHistoriesPassAndCorruptedOnesFail(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		choose := func(n int) int { return rapid.IntRange(0, n-1).Draw(t, "choice") }
		drain := rapid.Bool().Draw(t, "drain")
		options := Options{FinalDrain: drain}
		ops := correctHistory(choose, 1, rapid.IntRange(0, 120).Draw(t, "steps"), drain)
		if report := Check(ops, options); !report.Valid {
			t.Fatalf("a correct history failed:\n%s\n%s", report, dump(ops))
		}

		places := acknowledgedRecords(ops)
		var mutated []history.Op
		if rapid.Bool().Draw(t, "swap") {
			// Pairs of acknowledged records in one poll.
			var pairs [][2]recordPlace
			for i, first := range places {
				for _, second := range places[i+1:] {
					if second.op == first.op && second.poll == first.poll {
						pairs = append(pairs, [2]recordPlace{first, second})
					}
				}
			}
			if len(pairs) == 0 {
				return // possible only without a drain, which reads them all
			}
			pair := pairs[rapid.IntRange(0, len(pairs)-1).Draw(t, "pair")]
			received := slices.Clone(ops[pair[0].op].Polls[pair[0].poll].Records)
			x, y := pair[0].record, pair[1].record
			received[x].Value, received[y].Value = received[y].Value, received[x].Value
			mutated = withRecords(ops, pair[0].op, pair[0].poll, received)
		} else {
			var droppable []recordPlace
			for _, place := range places {
				if place.record < len(ops[place.op].Polls[place.poll].Records)-1 {
					droppable = append(droppable, place)
				}
			}
			if len(droppable) == 0 {
				return // possible only without a drain
			}
			place := droppable[rapid.IntRange(0, len(droppable)-1).Draw(t, "drop")]
			received := slices.Delete(slices.Clone(ops[place.op].Polls[place.poll].Records), place.record, place.record+1)
			mutated = withRecords(ops, place.op, place.poll, received)
		}
		if report := Check(mutated, options); report.Verdict != Fail {
			t.Fatalf("a corrupted history was not failed:\n%s\n%s", report, dump(mutated))
		}
	})
}

func dump(ops []history.Op) string {
	var text bytes.Buffer
	if err := history.Write(&text, ops); err != nil {
		return err.Error()
	}
	return text.String()
}
