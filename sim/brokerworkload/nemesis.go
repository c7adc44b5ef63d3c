package brokerworkload

import (
	"fmt"
	"time"

	"sluice/sim"
	"sluice/sim/kernel"
	"sluice/sim/simdisk"
)

// The nemesis injects the faults a seed chose, each kind as a Poisson
// process of its own mean interval, as kernel events of the world (owned by
// no process: a crash of the broker must not cancel the restart). It stops
// at the end of the safety phase; faults whose effect lasts a while (a full
// or slow disk, a crashed client) are undone by heal.

// startNemesis schedules the first fault of every kind the seed chose.
func (r *run) startNemesis() {
	s := r.settings
	stopped := func() bool { return r.faultsStopped }
	r.kernel.Every(r.nemesisRand, s.brokerCrashMean, "nemesis.broker-crash", stopped, r.brokerCrash)
	r.kernel.Every(r.nemesisRand, s.resetMean, "nemesis.reset", stopped, r.resetConnections)
	r.kernel.Every(r.nemesisRand, s.clientCrashMean, "nemesis.client-crash", stopped, r.clientCrash)
	r.kernel.Every(r.nemesisRand, s.fullDiskMean, "nemesis.full-disk", stopped, r.fullDisk)
	r.kernel.Every(r.nemesisRand, s.slowDiskMean, "nemesis.slow-disk", stopped, r.slowDisk)
}

// restartDelay draws how long a crashed broker stays down.
func (r *run) restartDelay() time.Duration {
	return kernel.Between(r.nemesisRand, 0, r.settings.restartDelayMax)
}

// brokerCrash crashes the broker, sometimes right after a burst of writes
// with no think time, so the crash finds appends in the page cache.
func (r *run) brokerCrash() {
	if !r.node.up {
		return
	}
	if r.nemesisRand.Float64() < r.settings.crashUnderLoad {
		burst := kernel.Between(r.nemesisRand, 0, crashBurstMax)
		r.burstUntil = r.kernel.Now() + int64(burst)
		r.note(fmt.Sprintf("write burst for %v, then crash", burst))
		r.kernel.Schedule(int64(burst), nil, "nemesis.crash-after-burst", func() {
			if !r.faultsStopped {
				r.node.crash(r.restartDelay())
			}
		})
		return
	}
	r.node.crash(r.restartDelay())
}

// resetConnections breaks connections as a middlebox RST does: every one
// of the broker's, or one at random.
func (r *run) resetConnections() {
	r.counts.resets++
	if r.nemesisRand.Float64() < r.settings.resetAllChance {
		r.record(sim.EventFault, "reset-"+nodeName, []string{nodeName}, "reset every connection of "+nodeName)
		r.network.ResetConnections(nodeName)
		return
	}
	r.record(sim.EventFault, "reset-"+nodeName, []string{nodeName}, "reset one connection")
	r.network.ResetRandomConnection()
}

// clientCrash crashes one producer's, reader's or group consumer's client
// and restarts it a little later.
func (r *run) clientCrash() {
	c := r.clients[r.nemesisRand.IntN(len(r.clients))]
	if !c.Alive() {
		return
	}
	r.counts.clientCrashes++
	r.recordFaultStart("client-crash-"+c.Name(), c.Name(), "crash "+c.Name())
	c.Crash()
	delay := kernel.Between(r.nemesisRand, 0, r.settings.clientRestartMax)
	r.kernel.Schedule(int64(delay), nil, "nemesis.client-restart", func() {
		r.restartClient(c)
	})
	r.afterClientCrash(c)
}

// fullDisk fills the disk for a short window: writes past a little
// headroom fail with ErrDiskFull.
func (r *run) fullDisk() {
	if r.diskFullUntil > r.kernel.Now() {
		return
	}
	disk := r.node.machine.Disk
	faults := disk.Faults()
	faults.CapacityBytes = disk.Usage() + r.nemesisRand.Int64N(fullDiskHeadroomBytesMax+1)
	disk.SetFaults(faults)
	window := kernel.Between(r.nemesisRand, 0, fullDiskWindowMax)
	r.diskFullUntil = r.kernel.Now() + int64(window)
	r.counts.fullDiskWindows++
	r.note(fmt.Sprintf("disk full at %d bytes for %v", faults.CapacityBytes, window))
	r.recordFaultStart("full-disk-"+nodeName, nodeName, fmt.Sprintf("disk full at %d bytes for %v", faults.CapacityBytes, window))
	r.kernel.Schedule(int64(window), nil, "nemesis.disk-space", func() {
		r.recordFaultEnd("full-disk-" + nodeName)
		faults := disk.Faults()
		faults.CapacityBytes = 0
		disk.SetFaults(faults)
	})
}

// slowDisk makes syncs slow for a window: acks=all waits, produce timeouts
// fire, clients retry.
func (r *run) slowDisk() {
	if r.diskSlowUntil > r.kernel.Now() {
		return
	}
	disk := r.node.machine.Disk
	faults := disk.Faults()
	faults.SyncLatencyMin = slowDiskLatencyMin
	faults.SyncLatencyMax = kernel.Between(r.nemesisRand, slowDiskLatencyMin, slowDiskLatencyMax)
	disk.SetFaults(faults)
	window := kernel.Between(r.nemesisRand, 0, slowDiskWindowMax)
	r.diskSlowUntil = r.kernel.Now() + int64(window)
	r.counts.slowDiskWindows++
	r.note(fmt.Sprintf("disk syncs take up to %v for %v", faults.SyncLatencyMax, window))
	r.recordFaultStart("slow-disk-"+nodeName, nodeName, fmt.Sprintf("disk syncs take up to %v for %v", faults.SyncLatencyMax, window))
	r.kernel.Schedule(int64(window), nil, "nemesis.disk-speed", func() {
		r.recordFaultEnd("slow-disk-" + nodeName)
		faults := disk.Faults()
		faults.SyncLatencyMin, faults.SyncLatencyMax = r.settings.disk.SyncLatencyMin, r.settings.disk.SyncLatencyMax
		disk.SetFaults(faults)
	})
}

// heal ends every fault for the liveness phase: a good disk, the broker
// and every client up.
func (r *run) heal() {
	r.faultsStopped = true
	r.burstUntil = 0
	r.node.heal(simdisk.Faults{SyncLatencyMin: r.settings.disk.SyncLatencyMin, SyncLatencyMax: r.settings.disk.SyncLatencyMax})
	r.network.Heal()
	r.network.RestoreLinks()
	for _, c := range r.clients {
		r.restartClient(c)
	}
	r.healGroup()
	r.recordHealed()
}
