package harness

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"sluice/jepsen/checker"
	"sluice/jepsen/compat"
)

// keepResultsEnvironment names a folder to keep the smoke run's results
// in; unset, they go to the test's temporary folder and are removed.
const keepResultsEnvironment = "SLUICE_JEPSEN_RESULTS"

// TestSmokeRun is `make jepsen` in small: a 4-node cluster (one node more
// than the replication factor, so that reassignments move data rather
// than only reorder the replicas), acks=all with min.insync.replicas=2,
// the operators of smokeWorkload, 40 s of faults (a kill, a pause, a
// partition, a full-cluster kill, each for 3-5 s), then recovery, the
// final read, the operators' checks and the checkers, which must find
// nothing (deleted records never read after their deletion was answered
// among it). It bounds itself to two minutes.
func TestSmokeRun(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a 4-node cluster under faults for about 60 s")
	}
	dir := t.TempDir()
	if keep := os.Getenv(keepResultsEnvironment); keep != "" {
		dir = filepath.Join(keep, time.Now().Format("20060102-150405"))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	result, err := Run(ctx, Config{
		Binary:     compat.BuildBinary(t),
		Nodes:      4,
		FaultPhase: 40 * time.Second,
		Faults:     []FaultKind{FaultKill, FaultPause, FaultPartition, FaultFullKill},
		Timing:     NemesisTiming{HoldMin: 3 * time.Second, HoldMax: 5 * time.Second, Quiet: 3 * time.Second, FullKillDowntime: time.Second},
		Seed:       1,
		Dir:        dir,
		Workload:   smokeWorkload(),
		Progress:   testWriter{t},
	})
	if err != nil {
		t.Fatal(err)
	}
	verdict, _ := os.ReadFile(filepath.Join(dir, VerdictFile))
	if !result.Pass {
		t.Fatalf("the smoke run failed (results in %s):\n%s", dir, verdict)
	}
	t.Logf("results in %s:\n%s", dir, verdict)
	// The run must have exercised what it claims: faults of every kind,
	// acknowledged writes, reads, and a group that committed.
	kinds := map[FaultKind]int{}
	for _, f := range result.Faults {
		kinds[f.Kind]++
	}
	for _, kind := range []FaultKind{FaultKill, FaultPause, FaultPartition, FaultFullKill} {
		if kinds[kind] == 0 {
			t.Errorf("no %s fault was injected; faults: %v", kind, result.Faults)
		}
	}
	if result.DeletesAnswered == 0 {
		t.Errorf("no DeleteRecords was answered (%d sent)", result.DeletesSent)
	}
	if result.ChurnJoined < 2 || result.ChurnLeft < 1 || result.ChurnCrashed < 1 {
		t.Errorf("the group churned %d members in, %d out and %d crashed; want at least 2, 1 and 1", result.ChurnJoined, result.ChurnLeft, result.ChurnCrashed)
	}
	if result.ElectionsSent == 0 {
		t.Error("no preferred leader election was sent")
	}
	if result.ReassignmentsConfirmed == 0 {
		t.Errorf("no partition reassignment was confirmed (%d sent)", result.ReassignmentsSent)
	}
	if result.Recreated == 0 || result.RecreatedConfirmed == 0 || result.RecreatedCopiesRead == 0 {
		t.Errorf("the operator's topic was created again %d times, with %d writes confirmed and %d nodes' copies read", result.Recreated, result.RecreatedConfirmed, result.RecreatedCopiesRead)
	}
	s := result.Stats
	if s.SendsOK == 0 || s.RecordsPolled == 0 || s.CommitsOK == 0 || s.Assignments == 0 || !s.Drained {
		t.Errorf("the workload did too little: %s", s)
	}
	if class, _ := result.Report.Class(checker.LostWrite); class.Count != 0 {
		t.Errorf("lost writes: %+v", class)
	}
}

// smokeWorkload is the default workload with an operator deleting what
// the group has consumed every 2 s, one deleting a topic of its own and
// creating it again every 2 s, one running preferred leader elections
// every second, and one reassigning a partition (or cancelling) every
// second, so that the real binary's DeleteRecords, DeleteTopics,
// ElectLeaders and AlterPartitionReassignments meet the faults too. Its
// group runs the cooperative protocol (the full runs' default is eager
// range, and the simulator's clients are eager) while an operator adds a
// member every 4 s and takes it out 4 s later, every other one by a crash
// the coordinator must notice by the member's silence, so KIP-429's
// incremental rebalances and session expiry meet the faults as well.
func smokeWorkload() Workload {
	w := DefaultWorkload(4)
	w.Balancer = BalancerCooperativeSticky
	w.ChurnEvery = 4 * time.Second
	w.ChurnExit = ChurnExitMixed
	w.DeleteEvery = 2 * time.Second
	w.RecreateEvery = 2 * time.Second
	w.ElectEvery = time.Second
	w.ReassignEvery = time.Second
	// Sends of three records, lz4: batches under faults, as applications
	// send them.
	w.BatchRecords, w.Compression = 3, "lz4"
	return w
}

// testWriter sends progress lines to the test's log.
type testWriter struct{ t *testing.T }

func (w testWriter) Write(b []byte) (int, error) {
	w.t.Log(string(b))
	return len(b), nil
}
