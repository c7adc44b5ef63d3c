package clusterworkload

import (
	"slices"

	"sluice/core"
	"sluice/sim"
	"sluice/sim/scenario"
)

// coverage counts the faults the nemesis applied, by kind, the actions
// the operator and the clients took, and what every node's BUGGIFY sites
// did, for a sweep's "never reached" summary. The
// kinds it can reach are those the swarm draws, and any other a scenario
// file schedules; a node runs every core package, so it can reach every
// site.
func (r *run) coverage() *sim.Coverage {
	if r == nil {
		return nil
	}
	var kinds []string
	drawn := scenario.DrawnKinds()
	for _, kind := range scenario.Kinds() {
		if slices.Contains(drawn, kind) || r.scenario.Has(kind) {
			kinds = append(kinds, string(kind))
		}
	}
	c := sim.NewCoverage(kinds, core.BuggifySites())
	for _, kind := range scenario.Kinds() {
		c.CountFault(string(kind), r.counts.faults[kind])
	}
	for _, n := range r.nodes {
		c.CountSites(n.machine.Buggify())
	}
	c.DeclareActions(actions...)
	_, grown := r.growthCounts()
	group := r.groupStats()
	c.CountAction(actionGrowPartitions, grown)
	c.CountAction(actionGroupGrowthRebalance, int(group.PartitionsGrown))
	c.CountAction(actionDeleteRecords, len(r.deletions))
	c.CountAction(actionStaticRejoin, int(group.StaticRejoins))
	c.CountAction(actionStaticLeaderSkipsAssignment, int(group.SkippedAssignments))
	c.CountAction(actionCooperativeRevoke, int(group.PartitionsRevoked))
	recreated, _, _, _ := r.recreationCounts()
	c.CountAction(actionRecreateTopic, recreated)
	_, altered := r.alterCounts()
	c.CountAction(actionAlterConfigs, altered)
	c.CountAction(actionUncleanElection, r.counts.uncleanElections)
	_, elected := r.electionCounts()
	c.CountAction(actionElectLeaders, elected)
	c.CountAction(actionLeaderRebalance, r.counts.leadersRebalanced)
	c.CountAction(actionReassignPartition, r.counts.reassignmentsCompleted)
	return c
}

// The operator's and clients' actions the swarm draws, which coverage
// counts as it counts faults: a topic's partition count confirmed grown
// (CreatePartitions), a group leader rebalancing for the new partitions,
// a DeleteRecords answered, a restarted static member rejoining by its
// group.instance.id, a returning static leader told to skip the
// assignment (KIP-814), a topic deleted and created again, the new
// incarnation learned, a topic's config change confirmed, a leader
// elected outside the ISR, a partition given a leader by the operator's
// ElectLeaders, a leadership the controller's automatic rebalancing
// moved back to a preferred replica, a partition reassignment a
// controller completed, and a partition a cooperative member gave up for
// another to take in the next rebalance.
const (
	actionGrowPartitions              = "grow-partitions"
	actionGroupGrowthRebalance        = "group-growth-rebalance"
	actionDeleteRecords               = "delete-records"
	actionStaticRejoin                = "static-rejoin"
	actionStaticLeaderSkipsAssignment = "static-leader-skips-assignment"
	actionRecreateTopic               = "recreate-topic"
	actionAlterConfigs                = "alter-configs"
	actionUncleanElection             = "unclean-election"
	actionElectLeaders                = "elect-leaders"
	actionLeaderRebalance             = "leader-rebalance"
	actionReassignPartition           = "reassign-partition"
	actionCooperativeRevoke           = "cooperative-revoke"
)

var actions = []string{
	actionGrowPartitions, actionGroupGrowthRebalance, actionDeleteRecords,
	actionStaticRejoin, actionStaticLeaderSkipsAssignment, actionRecreateTopic,
	actionAlterConfigs, actionUncleanElection, actionElectLeaders, actionLeaderRebalance,
	actionReassignPartition, actionCooperativeRevoke,
}
