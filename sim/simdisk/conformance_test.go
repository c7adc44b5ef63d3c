package simdisk

import (
	"testing"
	"time"

	"sluice/core/fstest"
	"sluice/sim/kernel"
)

// newTestDisk returns a disk on a fresh kernel, with its process.
func newTestDisk(seed uint64, faults Faults) (*Disk, *kernel.Kernel, *kernel.Process) {
	k := kernel.NewKernel(seed, nil)
	process := kernel.NewProcess("node")
	return New(k, process, kernel.NewRand(seed, "disk"), faults), k, process
}

// run drains the kernel: every pending event, sync completions included.
func run(k *kernel.Kernel) {
	for k.Step() {
	}
}

func TestConformance(t *testing.T) {
	// Syncs with spread latencies, so several are in flight at once; the
	// contract must hold whatever order the kernel picks.
	faults := Faults{SyncLatencyMin: time.Millisecond, SyncLatencyMax: 20 * time.Millisecond}
	seed := uint64(0)
	fstest.Run(t, func(t *testing.T) fstest.Harness {
		seed++
		d, k, _ := newTestDisk(seed, faults)
		return fstest.Harness{FS: d, Drain: func() { run(k) }}
	})
}
