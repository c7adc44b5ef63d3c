package simdisk

import (
	"fmt"
	"time"
)

// Faults is what the disk does wrong, and how slowly. The zero value is a
// perfect disk whose syncs complete on the next turn of the loop.
type Faults struct {
	// SyncLatencyMin and SyncLatencyMax bound the latency of each Sync and
	// SyncDir, drawn uniformly in between.
	SyncLatencyMin, SyncLatencyMax time.Duration

	// ReadCorruption is the chance that a ReadAt returns one flipped bit.
	// The flip is in the returned bytes only (a bad cable, a cosmic ray):
	// the media is fine and the next read is clean.
	ReadCorruption float64

	// SyncFailure is the chance that a Sync or SyncDir fails: done gets an
	// error, and the operations it covered never become durable (they stay
	// readable until the next crash).
	SyncFailure float64

	// TornWrite is the chance, at a crash, that a file (and, separately,
	// the namespace) keeps a random prefix of its unsynced operations, the
	// last one possibly cut short.
	TornWrite float64

	// CapacityBytes, when positive, is the total of file sizes the disk
	// holds. A write past it writes what fits and fails with
	// core.ErrDiskFull; a truncate past it fails whole.
	CapacityBytes int64
}

// Validate reports the first setting that makes no sense.
func (f Faults) Validate() error {
	if f.SyncLatencyMin < 0 || f.SyncLatencyMax < f.SyncLatencyMin {
		return fmt.Errorf("simdisk: sync latency [%v, %v] must satisfy 0 <= min <= max", f.SyncLatencyMin, f.SyncLatencyMax)
	}
	chances := []struct {
		name  string
		value float64
	}{
		{"ReadCorruption", f.ReadCorruption},
		{"SyncFailure", f.SyncFailure},
		{"TornWrite", f.TornWrite},
	}
	for _, chance := range chances {
		if !(chance.value >= 0 && chance.value <= 1) {
			return fmt.Errorf("simdisk: %s = %v; a chance lies in [0, 1]", chance.name, chance.value)
		}
	}
	if f.CapacityBytes < 0 {
		return fmt.Errorf("simdisk: CapacityBytes = %d; want 0 (unlimited) or more", f.CapacityBytes)
	}
	return nil
}

// Stats counts the faults injected and the work done, for coverage reports:
// a run that never tore a write did not test torn writes.
type Stats struct {
	SyncsCompleted    uint64 // Sync and SyncDir calls that succeeded
	SyncsFailed       uint64 // Sync and SyncDir calls failed by SyncFailure
	ReadsCorrupted    uint64 // ReadAt calls that returned a flipped bit
	WritesRefusedFull uint64 // writes cut short and truncates refused for lack of space
	Crashes           uint64 // calls of Crash
	CrashesTorn       uint64 // crashes that kept some unsynced operation
	WritesTorn        uint64 // writes cut short by a crash
}
