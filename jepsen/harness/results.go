package harness

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"sluice/jepsen/checker"
	"sluice/jepsen/history"
)

// The files of a results folder.
const (
	HistoryFile = "history.jsonl"
	VerdictFile = "verdict.txt"
	FaultsFile  = "faults.json"
	ReportFile  = "report.html"
	// visualizationsMax bounds the porcupine pages written for
	// partitions whose log is not linearizable.
	visualizationsMax = 3
)

// writeResults writes the results folder: the history as JSON lines, the
// verdict as text, the faults as JSON, the page of plots, and porcupine's
// visualization of each (of the first few) partition whose log is not
// linearizable. The nodes' logs are already there, in nodes/.
func writeResults(result *Result, ops []history.Op) error {
	var problems []error
	write := func(name string, content []byte) {
		if err := os.WriteFile(filepath.Join(result.Dir, name), content, 0o644); err != nil {
			problems = append(problems, err)
		}
	}
	var historyText bytes.Buffer
	if err := history.Write(&historyText, ops); err != nil {
		problems = append(problems, err)
	}
	write(HistoryFile, historyText.Bytes())
	write(VerdictFile, []byte(verdictText(result)))
	faults, err := json.MarshalIndent(result.Faults, "", "  ")
	if err != nil {
		problems = append(problems, err)
	}
	write(FaultsFile, faults)
	write(ReportFile, []byte(reportPage(result, ops)))
	written := 0
	for _, tp := range nonlinearizablePartitions(result.Report) {
		if written == visualizationsMax {
			break
		}
		var page bytes.Buffer
		options := checker.Options{FinalDrain: result.Stats.Drained, SearchSteps: searchSteps}
		if err := checker.VisualizeLog(ops, tp, options, &page); err != nil {
			problems = append(problems, fmt.Errorf("visualizing %s: %w", tp, err))
			continue
		}
		write("porcupine-"+tp.String()+".html", page.Bytes())
		written++
	}
	return errors.Join(problems...)
}

// nonlinearizablePartitions lists the partitions the report names in a
// nonlinearizable-log failure.
func nonlinearizablePartitions(report checker.Report) []history.TopicPartition {
	class, ok := report.Class(checker.NonlinearizableLog)
	if !ok {
		return nil
	}
	var partitions []history.TopicPartition
	for _, example := range class.Examples {
		if example.Status == checker.Failure {
			partitions = append(partitions, example.Partition)
		}
	}
	return partitions
}

// verdictText is verdict.txt: the verdict first, then the run's settings,
// its phases, the faults, the problems outside the checkers, and the
// checkers' report.
func verdictText(result *Result) string {
	var b strings.Builder
	verdict := "PASS"
	if !result.Pass {
		verdict = "FAIL"
	}
	fmt.Fprintf(&b, "%s  %s\n\n", verdict, result.Report.Summary())
	c := result.Config
	w := c.Workload
	acks := "all"
	if !w.AcksAll {
		acks = "1"
	}
	fmt.Fprintf(&b, "run: nodes=%d fault-phase=%v faults=%s seed=%d\n", c.Nodes, c.FaultPhase, joinKinds(c.Faults), c.Seed)
	fmt.Fprintf(&b, "workload: topic=%s partitions=%d replication-factor=%d min.insync.replicas=%d unclean=%t acks=%s idempotence=%s producers=%d×%d rate=%d/s batch=%d compression=%s assign-consumers=%d group-members=%d static=%t balancer=%s loss-permitted=%t\n",
		w.Topic, w.Partitions, w.ReplicationFactor, w.MinInsyncReplicas, w.UncleanLeaderElection, acks, w.Idempotence,
		w.Producers, w.ProducerConcurrency, w.SendsPerSecond, max(1, w.BatchRecords), cmp.Or(w.Compression, "snappy"),
		w.AssignConsumers, w.GroupMembers, w.Static, cmp.Or(w.Balancer, BalancerRange), w.LossPermitted())
	if len(c.Settings) > 0 {
		fmt.Fprintf(&b, "broker settings: %s\n", strings.Join(c.Settings, " "))
	}
	if w.DeleteEvery > 0 {
		fmt.Fprintf(&b, "deletes: every %v, sent %d, answered %d (deleted-records-served holds the answers)\n", w.DeleteEvery, result.DeletesSent, result.DeletesAnswered)
	}
	if w.RecreateEvery > 0 {
		fmt.Fprintf(&b, "recreated topic: every %v, incarnations after the first %d, writes %d, acknowledged %d, confirmed by topic id %d, nodes' copies read on disk %d (deleted-topic-resurrected, recreated-topic-write-lost)\n",
			w.RecreateEvery, result.Recreated, result.RecreatedWrites, result.RecreatedAcked, result.RecreatedConfirmed, result.RecreatedCopiesRead)
	}
	if w.AlterEvery > 0 {
		fmt.Fprintf(&b, "unclean leader election toggled: every %v, sent %d, confirmed %d; elected outside the ISR (loss permitted there only): partitions %v\n",
			w.AlterEvery, result.UncleanSent, result.UncleanConfirmed, result.UncleanElected)
	}
	if w.ChurnEvery > 0 {
		fmt.Fprintf(&b, "group churn: every %v, members joined %d, left %d, crashed %d\n", w.ChurnEvery, result.ChurnJoined, result.ChurnLeft, result.ChurnCrashed)
	}
	if w.ElectEvery > 0 {
		fmt.Fprintf(&b, "preferred leader elections: every %v, sent %d, partitions moved %d\n", w.ElectEvery, result.ElectionsSent, result.Elected)
	}
	if w.ReassignEvery > 0 {
		fmt.Fprintf(&b, "partition reassignments: every %v, sent %d, confirmed %d, cancelled %d, refused %d (nothing to cancel, or only new replicas in sync)\n",
			w.ReassignEvery, result.ReassignmentsSent, result.ReassignmentsConfirmed, result.ReassignmentsCancelled, result.ReassignmentsRefused)
	}
	fmt.Fprintf(&b, "history: %s\n\n", result.Stats)
	fmt.Fprintf(&b, "phases:\n")
	for _, p := range result.Phases {
		fmt.Fprintf(&b, "  %8.1fs  %7.1fs  %s\n", p.Start.Seconds(), p.Duration.Seconds(), p.Name)
	}
	fmt.Fprintf(&b, "\nfaults (%d):\n", len(result.Faults))
	for _, f := range result.Faults {
		fmt.Fprintf(&b, "  %s\n", f)
	}
	if len(result.Problems) > 0 {
		fmt.Fprintf(&b, "\nproblems outside the checkers (%d):\n", len(result.Problems))
		for _, p := range result.Problems {
			fmt.Fprintf(&b, "  %s\n", p)
		}
	}
	for _, exit := range result.UnexpectedExits {
		fmt.Fprintf(&b, "\nnode %d exited on its own (%s); the end of its log:\n%s\n", exit.Node, exit.Status, exit.LogTail)
	}
	fmt.Fprintf(&b, "\nchecker report:\n%s", result.Report.String())
	return b.String()
}
