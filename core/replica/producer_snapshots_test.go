package replica

import (
	"fmt"
	"testing"
)

// snapshotName builds with strconv what fmt's %020d wrote.
func TestSnapshotNameIsZeroPaddedOffset(t *testing.T) {
	for _, offset := range []int64{0, 7, 1234567, 99999999999999999, 1<<63 - 1, -1} {
		if got, want := snapshotName(offset), fmt.Sprintf("%020d%s", offset, snapshotSuffix); got != want {
			t.Fatalf("snapshotName(%d) = %q, want %q", offset, got, want)
		}
	}
}
