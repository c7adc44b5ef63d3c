package main

import "testing"

// TestAResetStaysWithinTheLog: every reset lands within [log start, end], as
// Kafka clamps one; --shift-by moves from the committed offset, or from the
// end where nothing is committed (where the group would start).
func TestAResetStaysWithinTheLog(t *testing.T) {
	const start, end = 10, 20
	for _, c := range []struct {
		flags     offsetReset
		toOffset  string
		shiftBy   string
		committed int64
		want      int64
	}{
		{flags: offsetReset{toEarliest: true}, committed: 15, want: start},
		{flags: offsetReset{toLatest: true}, committed: 15, want: end},
		{toOffset: "12", committed: 15, want: 12},
		{toOffset: "3", committed: 15, want: start},
		{toOffset: "99", committed: 15, want: end},
		{shiftBy: "-2", committed: 15, want: 13},
		{shiftBy: "-9", committed: 15, want: start},
		{shiftBy: "9", committed: 15, want: end},
		{shiftBy: "-4", committed: -1, want: 16},
	} {
		r := c.flags
		if err := r.parse(c.toOffset, c.shiftBy); err != nil {
			t.Fatalf("%+v: %v", c, err)
		}
		if got := r.target(c.committed, start, end); got != c.want {
			t.Errorf("%+v from committed %d: reset to %d, want %d", c, c.committed, got, c.want)
		}
	}
}

// TestAResetNamesExactlyOneTarget: none, two, or a malformed number is a
// clear error, not a guess.
func TestAResetNamesExactlyOneTarget(t *testing.T) {
	for _, c := range []struct {
		flags             offsetReset
		toOffset, shiftBy string
	}{
		{},
		{flags: offsetReset{toEarliest: true, toLatest: true}},
		{flags: offsetReset{toEarliest: true}, toOffset: "4"},
		{toOffset: "-1"},
		{toOffset: "x"},
		{shiftBy: "1.5"},
	} {
		r := c.flags
		if err := r.parse(c.toOffset, c.shiftBy); err == nil {
			t.Errorf("%+v: accepted", c)
		}
	}
}
