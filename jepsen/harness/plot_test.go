package harness

import (
	"strings"
	"testing"
	"time"

	"sluice/jepsen/checker"
	"sluice/jepsen/history"
)

// TestReportPageDrawsEverySendAndShadesEveryFault builds a small history
// by hand and checks the page: one dot per completed send, by outcome, a
// shaded window per fault, and no script or outside reference.
func TestReportPageDrawsEverySendAndShadesEveryFault(t *testing.T) {
	log := newHistoryLog(time.Now())
	tp := history.TopicPartition{Topic: "t", Partition: 0}
	for i, outcome := range []history.Type{history.OK, history.OK, history.Info} {
		process := log.newProcess()
		value := string(rune('a' + i))
		op, err := log.invoke(process, history.FuncSend, history.Payload{Sends: []history.Send{{Partition: tp, Value: value, Offset: history.OffsetUnknown}}})
		if err != nil {
			t.Fatal(err)
		}
		if outcome == history.OK {
			op.ok(history.Payload{Sends: []history.Send{{Partition: tp, Value: value, Offset: int64(i)}}})
		} else {
			op.info("timed out")
		}
	}
	ops := log.ops()
	result := &Result{
		Pass:   true,
		Report: checker.Check(ops, checker.Options{}),
		Faults: []FaultWindow{
			{Kind: FaultKill, Nodes: []int{1}, Detail: "SIGKILL", Start: time.Second, End: 2 * time.Second},
			{Kind: FaultPartition, Nodes: []int{2}, Detail: "isolate", Start: 3 * time.Second, End: 4 * time.Second},
		},
	}
	page := reportPage(result, ops)
	for _, want := range []string{"<svg", "PASS", "ok (2)", "unknown (info) (1)", "failed (0)", "<title>kill [1]: SIGKILL</title>", "<title>partition [2]: isolate</title>"} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
	if dots := strings.Count(page, "<circle"); dots != 3 {
		t.Errorf("%d dots, want one per completed send: 3", dots)
	}
	for _, forbidden := range []string{"<script", "http://", "https://"} {
		if strings.Contains(strings.ReplaceAll(page, "http://www.w3.org/2000/svg", ""), forbidden) {
			t.Errorf("the page contains %q: it must be self-contained", forbidden)
		}
	}
}
