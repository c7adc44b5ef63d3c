package checker

import (
	"fmt"

	"sluice/jepsen/history"
)

// Options say what the configuration under test promises.
type Options struct {
	// LossPermitted lists partitions whose acknowledged writes the
	// configuration may lose: acks=1, or fsync off with every replica
	// crashing at once. Anomalies that are consequences of loss
	// (see Anomaly.lossConsequence) are reported there as permitted, not
	// as failures.
	LossPermitted []history.TopicPartition

	// LossySenders lists processes whose acknowledged sends the
	// configuration may lose wherever they write: an acks=1 producer's,
	// acknowledged by the leader before any follower (or the disk) has
	// them. A lost or unseen value of theirs is permitted; so, in every
	// partition one of them sent to, are the other consequences of loss
	// (an offset reused, a log missing an append, a consumer sent back).
	// Another process's value lost there is still a failure: an acks=all
	// send is committed only once the in-sync replicas hold everything
	// the leader held before it, acks=1 records included.
	LossySenders []int

	// Deleted lists partitions whose records below an offset retention
	// deleted (each partition's final log start offset). An acknowledged
	// value below it that no poll received, and a poll that skipped
	// records only below it, are reported as permitted: the broker threw
	// them away on purpose. Anything at or above it is judged as before.
	Deleted []DeletedBelow

	// DeletesAnswered are the DeleteRecords a leader answered with a low
	// watermark: from then on no poll may return a record of the
	// partition below it (DeletedRecordsServed). Records deleted this
	// way belong in Deleted too, for the checks of what was not read.
	DeletesAnswered []DeleteAnswered

	// UncleanElected lists partitions a controller gave a leader outside
	// the ISR (unclean.leader.election.enable). Such a leader may lack
	// what a DeleteRecords answer said was deleted, as it may lack
	// acknowledged writes: a low watermark counts only the replicas on
	// live brokers (Kafka's lowWatermarkIfLeader), and a replica that
	// was down may still start below it when it is elected. A
	// DeletedRecordsServed there is reported as permitted. List these
	// partitions in LossPermitted too.
	UncleanElected []history.TopicPartition

	// FinalDrain says the history ends with polls that read every
	// partition to its end, so a value still unseen is lost.
	FinalDrain bool

	// SearchSteps is the budget of each linearizability search (one per
	// partition log and per (group, partition) register), in steps: a
	// step is one candidate operation tried. Zero means
	// SearchStepsDefault (2^24); the memory a search may take grows with
	// the steps past that. A search that runs out (of steps, or of its
	// memory) is reported in Report.Inconclusive. A budget in steps, not
	// time, makes the verdict a function of the history alone.
	SearchSteps int
}

func (o Options) validate() error {
	if o.SearchSteps < 0 {
		return fmt.Errorf("checker: negative search budget of %d steps", o.SearchSteps)
	}
	for _, tp := range o.LossPermitted {
		if tp.Topic == "" || tp.Partition < 0 {
			return fmt.Errorf("checker: loss permitted in invalid partition %q", tp.String())
		}
	}
	for _, d := range o.Deleted {
		if d.Partition.Topic == "" || d.Partition.Partition < 0 || d.Offset < 0 {
			return fmt.Errorf("checker: records deleted below offset %d of invalid partition %q", d.Offset, d.Partition.String())
		}
	}
	for _, process := range o.LossySenders {
		if process < 0 {
			return fmt.Errorf("checker: loss permitted to invalid process %d", process)
		}
	}
	for _, tp := range o.UncleanElected {
		if tp.Topic == "" || tp.Partition < 0 {
			return fmt.Errorf("checker: unclean election in invalid partition %q", tp.String())
		}
	}
	for _, d := range o.DeletesAnswered {
		if d.Partition.Topic == "" || d.Partition.Partition < 0 || d.LowWatermark < 0 {
			return fmt.Errorf("checker: a DeleteRecords answered low watermark %d of invalid partition %q", d.LowWatermark, d.Partition.String())
		}
	}
	return nil
}

// DeleteAnswered says that at time At (the history's clock) a leader
// answered a DeleteRecords of Partition: every record below LowWatermark
// is deleted.
type DeleteAnswered struct {
	Partition    history.TopicPartition
	LowWatermark int64
	At           int64
}

// DeletedBelow says that retention deleted every record of Partition
// below Offset: Offset is the partition's log start offset.
type DeletedBelow struct {
	Partition history.TopicPartition
	Offset    int64
}

func (o Options) searchBudget() searchBudget {
	if o.SearchSteps == 0 {
		return budgetOf(SearchStepsDefault)
	}
	return budgetOf(o.SearchSteps)
}
