package controller

import "sluice/core/metadata"

// Automatic leader rebalancing (Kafka's auto.leader.rebalance.enable, on
// by default). Failures move leadership away from a partition's first
// replica, its preferred leader, and nothing moves it back: after a
// rolling restart every leader sits on the nodes that stayed up. Every
// LeaderImbalanceCheckInterval (leader.imbalance.check.interval.seconds)
// the active controller gives every partition whose preferred replica is
// in the ISR and may lead, but does not lead, back to it: the preferred
// election of ElectLeaders, a clean one. KRaft's controller does the same
// and, like it, Sluice ignores leader.imbalance.per.broker.percentage: one
// imbalanced partition is enough.

// scheduleLeaderRebalance arms the next check of this term, if enabled.
func (c *Controller) scheduleLeaderRebalance(term uint64) {
	if c.config.LeaderImbalanceCheckInterval <= 0 {
		return
	}
	c.w.Clock.AfterFunc(c.config.LeaderImbalanceCheckInterval, func() {
		if c.term != term || !c.active {
			return
		}
		c.rebalanceLeaders()
		c.scheduleLeaderRebalance(term)
	})
}

// rebalanceLeaders proposes the preferred elections every imbalanced
// partition allows, at most recordsPerOperationMax at once (the next check
// takes the rest).
func (c *Controller) rebalanceLeaders() {
	c.submit(func() ([]metadata.Record, func(*failure)) {
		view := candidates{c: c, leaving: -1, joining: -1}
		var records []metadata.Record
	topics:
		for _, name := range c.image.TopicNames() {
			for _, p := range c.image.Topics[name].Partitions {
				if len(records) == recordsPerOperationMax {
					break topics
				}
				if record, f := c.planElection(name, p.Index, false, view); f == nil {
					records = append(records, *record)
				}
			}
		}
		if len(records) > 0 {
			c.eventLogger().Info(LeadersRebalancedMessage, "partitions", len(records))
		}
		return records, func(f *failure) {
			if f != nil {
				c.log.Warn("moving leaders back to their preferred replicas failed", "error", f.message)
			}
		}
	}, func(*failure) {})
}

// LeadersRebalancedMessage is what the controller logs when it proposes
// moving leaders back to their preferred replicas; the simulator counts
// these lines.
const LeadersRebalancedMessage = "moving leaders back to their preferred replicas"
