package clusterworkload

import (
	"slices"

	"sluice/sim"
	"sluice/sim/scenario"
	"sluice/sim/simclient"
)

// stats lists what the run did, in a stable order: the operations, the
// faults injected per kind (only those that found a target), and what
// the checks covered.
func (r *run) stats() []sim.Option {
	if r == nil {
		return nil
	}
	var sends, ok, failed, unknown, retries, recordsSent int64
	for _, d := range r.producers {
		s := d.producer.Stats()
		sends, ok, failed, unknown, retries = sends+s.Sends, ok+s.OK, failed+s.Failed, unknown+s.Unknown, retries+s.Retries
		recordsSent += s.Records
	}
	var polls, records int64
	readers := make([]*simclient.Reader, 0, len(r.readers)+1)
	for _, d := range r.readers {
		readers = append(readers, d.reader)
	}
	if r.drainer != nil {
		readers = append(readers, r.drainer)
	}
	for _, reader := range readers {
		s := reader.Stats()
		polls, records = polls+s.Fetches, records+s.RecordsRead
	}
	group := r.groupStats()
	var crashes, halts, restarts, shutdowns int
	var syncsFailed, readsCorrupted, writesTorn, writesRefused uint64
	for _, n := range r.nodes {
		crashes, halts, restarts = crashes+n.crashes, halts+n.halts, restarts+n.restarts
		shutdowns += n.shutdowns
		d := n.machine.Disk.Stats()
		syncsFailed += d.SyncsFailed
		readsCorrupted += d.ReadsCorrupted
		writesTorn += d.WritesTorn
		writesRefused += d.WritesRefusedFull
	}
	stats := []sim.Option{
		sim.Opt("ops", r.recorder.Len()),
		sim.Opt("sends", sends),
		sim.Opt("records_sent", recordsSent),
		sim.Opt("sends_ok", ok),
		sim.Opt("sends_fail", failed),
		sim.Opt("sends_info", unknown),
		sim.Opt("retries", retries),
		sim.Opt("polls", polls),
		sim.Opt("records_read", records),
		sim.Opt("group_generations", group.Generations),
		sim.Opt("group_polls", group.Fetches),
		sim.Opt("commits", group.Commits),
		sim.Opt("commits_ok", group.CommitsOK),
		sim.Opt("crashes", crashes),
		sim.Opt("halts", halts),
		sim.Opt("restarts", restarts),
		sim.Opt("syncs_failed", syncsFailed),
		sim.Opt("reads_corrupted", readsCorrupted),
		sim.Opt("writes_torn", writesTorn),
		sim.Opt("writes_refused_full", writesRefused),
		sim.Opt("quorum_leaderships", r.counts.quorumLeaderships),
		sim.Opt("partition_leaderships", r.counts.partitionLeaderships),
		sim.Opt("loss_permitted", r.counts.lossPermitted),
		sim.Opt("replicas_compared", r.counts.replicasCompared),
		sim.Opt("liveness_time", r.counts.livenessTime.Round(1e6)),
		sim.Opt("operations_wait", r.counts.operationsWait.Round(1e6)),
	}
	if slices.ContainsFunc(r.scenario.Clients.Groups, func(g scenario.Group) bool { return g.Balancer != scenario.BalancerEager }) {
		// Only when a group has cooperative members, as for monitors
		// below.
		stats = append(stats, sim.Opt("partitions_added", group.PartitionsAdded),
			sim.Opt("partitions_revoked", group.PartitionsRevoked), sim.Opt("partitions_lost", group.PartitionsLost))
	}
	if r.counts.faults[scenario.KindShutdown] > 0 {
		// Only when nodes were shut down: how many of those stopped
		// (a crash may cut one short).
		stats = append(stats, sim.Opt("shutdowns_completed", shutdowns))
	}
	if len(r.offsetReaders) > 0 {
		// Only when the scenario has monitors, so that the result line
		// of every other scenario reads as it did before they existed.
		reads, readsOK := 0, 0
		for _, d := range r.offsetReaders {
			reads, readsOK = reads+d.reads, readsOK+d.readsOK
		}
		stats = append(stats, sim.Opt("offset_reads", reads), sim.Opt("offset_reads_ok", readsOK))
	}
	if c := r.counts; c.metadataSnapshotsTaken+c.metadataSnapshotDownloads+c.metadataSnapshotsRestored > 0 {
		// Only when snapshots happened, as for monitors.
		stats = append(stats,
			sim.Opt("metadata_snapshots", c.metadataSnapshotsTaken),
			sim.Opt("metadata_snapshot_downloads", c.metadataSnapshotDownloads),
			sim.Opt("metadata_snapshots_restored", c.metadataSnapshotsRestored))
	}
	if r.scenario.Logs != (scenario.Logs{}) {
		// Only when the scenario shrank the logs' settings, as above.
		stats = append(stats, sim.Opt("segments_max", r.segmentsMax()), sim.Opt("compactions", r.counts.compactions))
	}
	if r.scenario.Logs.RetentionBytes != 0 || r.counts.deletesSent > 0 {
		// Only when retention or the operator may delete: proof that
		// it did.
		stats = append(stats, sim.Opt("log_start_max", r.logStartMax()))
	}
	if len(r.growths) > 0 {
		// Only when a topic grows: how many requests it took, and how
		// often a group's leader rebalanced for it.
		requests, learned := r.growthCounts()
		stats = append(stats, sim.Opt("topics_grown", learned), sim.Opt("growth_requests", requests),
			sim.Opt("group_growth_rebalances", group.PartitionsGrown))
	}
	if r.counts.deletesSent > 0 {
		// Only when the operator deleted records: rounds, answers.
		stats = append(stats, sim.Opt("deletes", r.counts.deletesSent), sim.Opt("deletes_ok", len(r.deletions)))
	}
	if len(r.recreations) > 0 {
		// Only when the operator deletes and creates a topic again:
		// incarnations created after the first, writes, those
		// acknowledged and those read back by topic id.
		recreated, writes, acked, confirmed := r.recreationCounts()
		stats = append(stats, sim.Opt("topics_recreated", recreated), sim.Opt("recreated_writes", writes),
			sim.Opt("recreated_writes_ok", acked), sim.Opt("recreated_writes_confirmed", confirmed))
	}
	if len(r.alterers) > 0 {
		// Only when the operator alters a topic's configs: changes
		// begun and confirmed.
		changes, confirmed := r.alterCounts()
		stats = append(stats, sim.Opt("config_changes", changes), sim.Opt("config_changes_ok", confirmed))
	}
	if len(r.electors) > 0 {
		// Only when the operator runs leader elections: rounds, and
		// partitions given a leader.
		rounds, elected := r.electionCounts()
		stats = append(stats, sim.Opt("election_rounds", rounds), sim.Opt("elections_ok", elected))
	}
	if len(r.reassigners) > 0 {
		// Only when the operator reassigns partitions: rounds,
		// requests a controller confirmed, and reassignments the
		// controllers completed.
		rounds, confirmed := r.reassignmentCounts()
		stats = append(stats, sim.Opt("reassign_rounds", rounds), sim.Opt("reassigns_ok", confirmed),
			sim.Opt("reassignments_completed", r.counts.reassignmentsCompleted))
	}
	if r.scenario.Cluster.LeaderRebalanceEvery != 0 {
		// Only when the controllers rebalance leaders: leaderships
		// they proposed to move back.
		stats = append(stats, sim.Opt("leaders_rebalanced", r.counts.leadersRebalanced))
	}
	if r.counts.uncleanElections > 0 {
		// Only when it happened: leaders a controller chose outside
		// the ISR.
		stats = append(stats, sim.Opt("unclean_elections", r.counts.uncleanElections))
	}
	if r.counts.drainsAgain > 0 {
		// Only when it happened, for the same reason.
		stats = append(stats, sim.Opt("drains_again", r.counts.drainsAgain))
	}
	faults := 0
	for _, kind := range scenario.Kinds() {
		faults += r.counts.faults[kind]
	}
	stats = append(stats, sim.Opt("faults", faults))
	for _, kind := range scenario.Kinds() {
		if n := r.counts.faults[kind]; n > 0 {
			stats = append(stats, sim.Opt("fault_"+string(kind), n))
		}
	}
	return stats
}

// groupStats sums what the groups' members did (the counts stats and
// coverage use).
func (r *run) groupStats() simclient.GroupConsumerStats {
	var group simclient.GroupConsumerStats
	for _, g := range r.groups {
		for _, m := range g.members {
			s := m.consumer.Stats()
			group.Generations += s.Generations
			group.Commits, group.CommitsOK = group.Commits+s.Commits, group.CommitsOK+s.CommitsOK
			group.Fetches, group.Records = group.Fetches+s.Fetches, group.Records+s.Records
			group.PartitionsGrown += s.PartitionsGrown
			group.StaticRejoins += s.StaticRejoins
			group.SkippedAssignments += s.SkippedAssignments
			group.PartitionsAdded += s.PartitionsAdded
			group.PartitionsRevoked += s.PartitionsRevoked
			group.PartitionsLost += s.PartitionsLost
		}
	}
	return group
}

// growthCounts sums the topics' growths: CreatePartitions requests sent,
// and growths confirmed.
func (r *run) growthCounts() (requests, learned int) {
	for _, g := range r.growths {
		requests += g.attempts
		if g.learned {
			learned++
		}
	}
	return requests, learned
}
