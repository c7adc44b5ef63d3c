package harness

import (
	"context"
	"fmt"
	"path/filepath"

	"sluice/jepsen/checker"
)

// PowerCase is one configuration of the power check: whether its settings
// permit losing acknowledged writes, and so whether the harness must find
// loss in it.
type PowerCase struct {
	Name     string
	WantLoss bool
	Config   Config
}

// PowerOutcome is what one case found.
type PowerOutcome struct {
	Case   PowerCase
	Result *Result
	// Loss counts the findings that are what losing acknowledged writes
	// looks like (lost-write, unseen, inconsistent-offsets,
	// nonmonotonic-send, nonlinearizable-log), permitted or not.
	Loss int
	// OK: loss found where permitted; nothing found, and the run
	// passing, where not.
	OK bool
}

// lossClasses are the anomaly classes that are consequences of loss.
var lossClasses = []checker.Anomaly{checker.LostWrite, checker.Unseen, checker.InconsistentOffsets, checker.NonmonotonicSend, checker.NonlinearizableLog}

// PowerCases are the power check's configurations, built from base (its
// binary, timing, seed and folder; base.Dir is the parent of one folder
// per case):
//   - acks=1 under leader kills and partitions (a leader cut off from its
//     peers but not from its clients keeps acknowledging alone): must lose;
//   - unclean leader election under partitions: 5 nodes, acks=all with
//     min.insync.replicas=1 and unclean.leader.election.enable, under
//     the strand fault: must lose;
//   - the promise: acks=all, min.insync.replicas=2, RF=3, under the same
//     kills and partitions as the first: must lose nothing and pass.
func PowerCases(base Config) []PowerCase {
	lossy := base
	lossy.Nodes = 3
	lossy.Faults = []FaultKind{FaultKill, FaultPartition}
	lossy.Workload = DefaultWorkload(3)
	lossy.Workload.AcksAll = false
	lossy.Workload.Idempotence = IdempotenceOff
	lossy.Dir = filepath.Join(base.Dir, "acks-1")

	unclean := base
	unclean.Nodes = 5
	unclean.Faults = []FaultKind{FaultStrand}
	unclean.Workload = DefaultWorkload(5)
	unclean.Workload.MinInsyncReplicas = 1
	unclean.Workload.UncleanLeaderElection = true
	unclean.Dir = filepath.Join(base.Dir, "unclean-election")

	promise := lossy
	promise.Workload = DefaultWorkload(3)
	promise.Dir = filepath.Join(base.Dir, "acks-all")

	return []PowerCase{
		{Name: "acks=1, leader kills and partitions", WantLoss: true, Config: lossy},
		{Name: "unclean leader election under partitions (5 nodes, min.insync.replicas=1)", WantLoss: true, Config: unclean},
		{Name: "acks=all, min.insync.replicas=2, RF=3, leader kills and partitions", WantLoss: false, Config: promise},
	}
}

// PowerCheck runs every case and judges it. An error means a case could
// not run at all.
func PowerCheck(ctx context.Context, cases []PowerCase) ([]PowerOutcome, error) {
	var outcomes []PowerOutcome
	for _, c := range cases {
		result, err := Run(ctx, c.Config)
		if err != nil {
			return outcomes, fmt.Errorf("power check %q: %w", c.Name, err)
		}
		outcome := PowerOutcome{Case: c, Result: result}
		for _, anomaly := range lossClasses {
			if class, ok := result.Report.Class(anomaly); ok {
				outcome.Loss += class.Count
			}
		}
		if c.WantLoss {
			outcome.OK = outcome.Loss > 0
		} else {
			outcome.OK = outcome.Loss == 0 && result.Pass
		}
		outcomes = append(outcomes, outcome)
	}
	return outcomes, nil
}

func (o PowerOutcome) String() string {
	verdict := "ok"
	if !o.OK {
		verdict = "NOT OK"
	}
	want := "must lose nothing"
	if o.Case.WantLoss {
		want = "must show loss"
	}
	return fmt.Sprintf("%-6s %s (%s): %d loss findings; %s; results in %s",
		verdict, o.Case.Name, want, o.Loss, o.Result.Report.Summary(), o.Result.Dir)
}
