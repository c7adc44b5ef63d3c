package brokerworkload

import (
	"sluice/jepsen/checker"
	"sluice/sim"
	"sluice/sim/simclient"
	"sluice/sim/simdisk"
)

// check judges the history with every checker; the drain at the end read
// every partition to its end, so an acknowledged value nobody read is lost.
func (r *run) check() *violation {
	ops := r.recorder.History()
	options := checker.Options{
		LossySenders: r.lossySenders(),
		FinalDrain:   true,
		SearchSteps:  r.searchSteps,
	}
	r.recording.Checked(ops, options)
	report := checker.Check(ops, options)
	r.report = report.Summary()
	r.note("check " + r.report)
	for _, class := range report.Classes {
		r.counts.lossPermitted += class.Permitted
	}
	if check, detail, failed := report.Violation(); failed {
		return &violation{check, detail}
	}
	return nil
}

// lossySenders lists the history processes of the acks=1 producers: what
// they were acknowledged may vanish when the broker crashes before a sync.
// An acks=all value is answered only once a sync covers it, and what the
// log held before it, so it may not.
func (r *run) lossySenders() []int {
	var processes []int
	for _, d := range r.producers {
		if d.producer.Config().Acks == 1 {
			processes = append(processes, d.producer.Processes()...)
		}
	}
	return processes
}

// stats lists what the run did, in a stable order.
func (r *run) stats() []sim.Option {
	var sends, ok, failed, unknown, retries, recordsSent int64
	for _, d := range r.producers {
		s := d.producer.Stats()
		sends, ok, failed, unknown, retries = sends+s.Sends, ok+s.OK, failed+s.Failed, unknown+s.Unknown, retries+s.Retries
		recordsSent += s.Records
	}
	var polls, records, outOfRange, corrupt int64
	readers := r.readers
	if r.drainer != nil {
		readers = append(readers[:len(readers):len(readers)], r.drainer)
	}
	for _, reader := range readers {
		s := reader.Stats()
		polls, records, outOfRange, corrupt = polls+s.Fetches, records+s.RecordsRead, outOfRange+s.OutOfRange, corrupt+s.CorruptAnswers
	}
	var timeouts int64
	for _, c := range r.clients {
		timeouts += c.Stats().RequestsTimedOut
	}
	var group simclient.GroupConsumerStats
	for _, d := range r.consumers {
		s := d.consumer.Stats()
		group.Generations += s.Generations
		group.Commits, group.CommitsOK, group.CommitsInfo = group.Commits+s.Commits, group.CommitsOK+s.CommitsOK, group.CommitsInfo+s.CommitsInfo
		group.Fetches, group.Records = group.Fetches+s.Fetches, group.Records+s.Records
		group.FetchCommitted += s.FetchCommitted
	}
	disk := simdisk.Stats{}
	crashes, halts := 0, 0
	if r.node != nil {
		disk = r.node.machine.Disk.Stats()
		crashes, halts = r.node.crashes, r.node.halts
	}
	return []sim.Option{
		sim.Opt("ops", r.recorder.Len()),
		sim.Opt("sends", sends),
		sim.Opt("records_sent", recordsSent),
		sim.Opt("sends_ok", ok),
		sim.Opt("sends_fail", failed),
		sim.Opt("sends_info", unknown),
		sim.Opt("retries", retries),
		sim.Opt("polls", polls),
		sim.Opt("records_read", records),
		sim.Opt("out_of_range", outOfRange),
		sim.Opt("corrupt_fetches", corrupt),
		sim.Opt("request_timeouts", timeouts),
		sim.Opt("broker_crashes", crashes),
		sim.Opt("halts", halts),
		sim.Opt("resets", r.counts.resets),
		sim.Opt("client_crashes", r.counts.clientCrashes),
		sim.Opt("full_disk", r.counts.fullDiskWindows),
		sim.Opt("slow_disk", r.counts.slowDiskWindows),
		sim.Opt("slow_links", r.counts.slowLinks),
		sim.Opt("syncs_failed", disk.SyncsFailed),
		sim.Opt("reads_corrupted", disk.ReadsCorrupted),
		sim.Opt("writes_torn", disk.WritesTorn),
		sim.Opt("writes_refused_full", disk.WritesRefusedFull),
		sim.Opt("loss_permitted", r.counts.lossPermitted),
		sim.Opt("group_assignments", group.Generations),
		sim.Opt("group_polls", group.Fetches),
		sim.Opt("group_records", group.Records),
		sim.Opt("commits", group.Commits),
		sim.Opt("commits_ok", group.CommitsOK),
		sim.Opt("commits_info", group.CommitsInfo),
		sim.Opt("committed_reads", group.FetchCommitted),
		sim.Opt("consumer_leaves", r.counts.consumerLeaves),
		sim.Opt("consumer_stalls", r.counts.consumerStalls),
		sim.Opt("crashes_in_rebalance", r.counts.crashesInRebalance),
	}
}
