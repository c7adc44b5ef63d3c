package brokerworkload

import (
	"fmt"

	"sluice/sim"
	"sluice/sim/kernel"
	"sluice/sim/simclient"
)

// The nemesis's faults aimed at the consumer group, on top of the client
// crashes every client suffers: a consumer leaving and coming back, a
// consumer stalling (frozen long enough, at times, for its session to
// expire while it still believes it owns its partitions: a zombie), and a
// broker crash while the group rebalances after a consumer left or
// crashed.

// startGroupNemesis schedules the first group fault of every kind the
// seed chose.
func (r *run) startGroupNemesis() {
	g := r.settings.group
	stopped := func() bool { return r.faultsStopped }
	r.kernel.Every(r.nemesisRand, g.leaveMean, "nemesis.consumer-leave", stopped, r.consumerLeave)
	r.kernel.Every(r.nemesisRand, g.stallMean, "nemesis.consumer-stall", stopped, r.consumerStall)
}

// consumerLeave makes one consumer leave the group, and start again a
// little later.
func (r *run) consumerLeave() {
	d := r.consumers[r.nemesisRand.IntN(len(r.consumers))]
	if !d.client.Alive() || !d.consumer.Membership().Stable {
		return
	}
	r.counts.consumerLeaves++
	r.note(fmt.Sprintf("consumer c%d leaves", d.index))
	name := d.client.Name()
	r.recordFaultStart("client-leave-"+name, name, name+" leaves the group")
	d.consumer.Leave()
	delay := kernel.Between(r.nemesisRand, 0, r.settings.group.rejoinDelayMax)
	r.kernel.Schedule(int64(delay), nil, "nemesis.consumer-rejoin", func() {
		r.recordFaultEnd("client-leave-" + name)
		d.consumer.Start()
	})
	r.maybeCrashInRebalance()
}

// consumerStall freezes one consumer.
func (r *run) consumerStall() {
	d := r.consumers[r.nemesisRand.IntN(len(r.consumers))]
	if !d.client.Alive() {
		return
	}
	r.counts.consumerStalls++
	g := r.settings.group
	stall := kernel.Between(r.nemesisRand, g.stallMin, g.stallMax)
	r.record(sim.EventFault, "client-stall-"+d.client.Name(), []string{d.client.Name()}, fmt.Sprintf("%s stalls for %v", d.client.Name(), stall))
	d.consumer.Stall(stall)
}

// afterClientCrash follows a client crash: a crashed consumer makes the
// group rebalance once its session expires, which is a moment to crash
// the broker too.
func (r *run) afterClientCrash(c *simclient.Client) {
	if r.consumerOf(c) != nil {
		r.maybeCrashInRebalance()
	}
}

// maybeCrashInRebalance crashes the broker, at the seed's chance, some
// time within the rebalance a consumer's leave or crash starts: at once
// for a leave, after the session timeout for a crash.
func (r *run) maybeCrashInRebalance() {
	g := r.settings.group
	if r.nemesisRand.Float64() >= g.crashInRebalance {
		return
	}
	wait := kernel.Between(r.nemesisRand, 0, g.sessionTimeout+brokerCrashInRebalanceWaitMax)
	r.kernel.Schedule(int64(wait), nil, "nemesis.crash-in-rebalance", func() {
		if r.faultsStopped || !r.node.up {
			return
		}
		r.counts.crashesInRebalance++
		r.note("crash broker while the group rebalances")
		r.node.crash(r.restartDelay())
	})
}

// healGroup ends the group's faults for the liveness phase: every
// consumer unfrozen and consuming (its client is restarted by heal).
func (r *run) healGroup() {
	for _, d := range r.consumers {
		d.consumer.Resume()
		d.consumer.Start()
	}
}
