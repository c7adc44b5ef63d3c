package replica

import (
	"slices"
	"time"
)

// Replicas a reassignment removed (core/controller, reassign.go) may still
// serve reads for a while: a broker whose metadata lags has not yet
// applied its replica's removal, believes it still hosts the partition,
// and, if it led it, answers consumers on its controller lease as before.
// Its start offset is no longer reported to anyone, so a DeleteRecords
// answer given meanwhile could promise records gone that it still serves.
//
// The controller bounds the window: a broker renews its lease only from a
// heartbeat sent with every record that took a replica or a leadership
// from it applied (core/controller, catch_up.go), so a removed replica's
// broker that has not applied its removal loses its lease at most a lease
// after the removal. Every replica notes the replicas a change removes,
// and a leader promises no low watermark while one of them is on a live
// broker and younger than DepartedWatch (a session, longer than a lease),
// as Kafka's lowWatermarkIfLeader counts every live replica.

// departedReplica is a replica removed at a time (Clock.Elapsed).
type departedReplica struct {
	id    int32
	until time.Duration
}

// noteDeparted records the replicas that replicas, the partition's new
// replica set, leaves out of the current one.
func (p *Partition) noteDeparted(replicas []int32) {
	now := p.w.Clock.Elapsed()
	p.departed = slices.DeleteFunc(p.departed, func(d departedReplica) bool {
		return d.until <= now || slices.Contains(replicas, d.id)
	})
	for _, id := range p.replicas {
		if id != p.nodeID && !slices.Contains(replicas, id) {
			p.departed = append(p.departed, departedReplica{id: id, until: now + p.config.DepartedWatch})
		}
	}
}

// departedMayServe reports whether a departed replica may still serve
// reads: its broker is alive and its watch is not over. Unless one is
// already set, it sets a timer to look at the waiting deletions again
// when the last such watch ends (that look sets the next, if a later
// watch began meanwhile).
func (p *Partition) departedMayServe() bool {
	now := p.w.Clock.Elapsed()
	last := time.Duration(-1)
	for _, d := range p.departed {
		if d.until > now && p.brokerAlive(d.id) {
			last = max(last, d.until)
		}
	}
	if last < 0 {
		return false
	}
	if p.departedTimer != nil {
		return true
	}
	p.departedTimer = p.w.Clock.AfterFunc(last-now, func() {
		p.departedTimer = nil
		if !p.closed {
			p.completeDeletes()
		}
	})
	return true
}
