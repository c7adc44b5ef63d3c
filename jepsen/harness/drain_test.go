package harness

import "testing"

// The final read of a run whose last DeleteRecords took every record of a
// partition (smoke run, seed 1: log start 1026 = end 1026) must count that
// partition as read: nothing is left to poll, and a consumer at the end
// waits for good.
func TestDrainedCountsAPartitionDeletedToItsEnd(t *testing.T) {
	ends := map[int32]int64{0: 1035, 1: 1074, 2: 1026}
	starts := map[int32]int64{0: 877, 1: 1000, 2: 1026}
	positions := map[int32]int64{0: 1035, 1: 1074}
	if !drained(3, positions, starts, ends) {
		t.Errorf("partition 2, deleted up to its end, kept the read going")
	}
	starts[2] = 1025
	if drained(3, positions, starts, ends) {
		t.Errorf("partition 2 still holds offset 1025, unread, yet the read ended")
	}
	positions[2] = 1026
	if !drained(3, positions, starts, ends) {
		t.Errorf("every partition read to its end, yet the read went on")
	}
	positions[1] = 1073
	if drained(3, positions, starts, ends) {
		t.Errorf("partition 1 short of its end by one, yet the read ended")
	}
}
