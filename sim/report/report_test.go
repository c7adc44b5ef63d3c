package report

import (
	"bytes"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"sluice/core/replica"
	"sluice/jepsen/history"
	"sluice/sim"
	"sluice/sim/catalog"
)

// reportCanaries are the planted bugs whose failing seeds the test
// reports, one per workload that keeps a recording: a leader that counts
// unsynced appends loses acknowledged writes on a power loss, which the
// checker pins to one partition; a leader that ignores the producer's
// duplicate window writes a retried batch twice.
var reportCanaries = []struct{ workload, canary string }{
	{"cluster", replica.CanaryAcksBeforeSync},
	{"broker", replica.CanaryDuplicateWindowIgnored},
}

// TestReportOfACanarysFailingSeed runs the first seed that catches a
// canary, writes its report, and checks the page: every section, the
// failing check and the partition it names, the porcupine visualization
// of that partition embedded, the timeline's node rows, and nothing
// fetched from a network.
func TestReportOfACanarysFailingSeed(t *testing.T) {
	for _, c := range reportCanaries {
		t.Run(c.workload, func(t *testing.T) { reportCanarysFailingSeed(t, c.workload, c.canary) })
	}
}

func reportCanarysFailingSeed(t *testing.T, workload, name string) {
	i := slices.IndexFunc(catalog.Canaries(), func(c sim.Canary) bool { return c.Name == name && c.Workload == workload })
	if i < 0 {
		t.Fatalf("no canary %s in the %s workload", name, workload)
	}
	canary := catalog.Canaries()[i]
	w, _ := catalog.Workload(workload)
	options := sim.RunOptions{Canaries: []string{canary.Name}, Record: true}
	var r sim.Result
	for seed := uint64(1); seed <= uint64(canary.SeedsMax); seed++ {
		r = w.Run(seed, options)
		if !r.Passed() && r.Recording != nil && len(r.Recording.History) > 0 {
			break
		}
	}
	if r.Passed() {
		t.Fatalf("%s was not caught within %d seeds", canary.Name, canary.SeedsMax)
	}
	var page bytes.Buffer
	run := Run{Workload: workload, Canaries: options.Canaries, Replay: fmt.Sprintf("sluice sim --workload %s --seed %d --canary %s", workload, r.Seed, canary.Name)}
	if err := Write(&page, run, r); err != nil {
		t.Fatal(err)
	}
	text := page.String()
	for _, want := range []string{
		`id="verdict-section"`, `id="timeline-section"`, `<svg id="timeline"`,
		`id="porcupine-section"`, `<iframe id="porcupine"`, `id="operations-section"`, `<table id="ops">`,
		`id="failed-check">` + r.Check + `<`, run.Replay,
	} {
		if !strings.Contains(text, want) {
			t.Errorf("the report lacks %q", want)
		}
	}
	partition := regexp.MustCompile(`id="failing-partition">([^<]+)<`).FindStringSubmatch(text)
	if partition == nil {
		t.Fatalf("the report names no failing partition for check %s (%s)", r.Check, r.Detail)
	}
	if !strings.Contains(text, "porcupine: the log of partition "+partition[1]) && !strings.Contains(text, "committed offset of "+partition[1]) {
		t.Errorf("the porcupine frame is not about the failing partition %s", partition[1])
	}
	for _, node := range r.Recording.Nodes {
		if !strings.Contains(text, `<text class="rowname" x="4" y="`) || !strings.Contains(text, ">"+node+"</text>") {
			t.Errorf("the timeline has no row for %s", node)
		}
	}
	if !strings.Contains(text, "culprit") {
		t.Error("no operation of the failing finding is marked")
	}
	// Self-contained: nothing loaded from elsewhere.
	for _, external := range []string{`src="http`, `href="http`, `src="//`, `@import`, `url(http`} {
		if strings.Contains(text, external) {
			t.Errorf("the report fetches something: %q", external)
		}
	}
	t.Logf("seed %d check %s partition %s: %d bytes", r.Seed, r.Check, partition[1], page.Len())
}

// TestReportOfAPassingRun draws a passing run: verdict, timeline and
// table, no porcupine frame.
func TestReportOfAPassingRun(t *testing.T) {
	w, _ := catalog.Workload("cluster")
	r := w.Run(1, sim.RunOptions{Record: true})
	if !r.Passed() {
		t.Skipf("seed 1 fails: %s", r.Line())
	}
	var page bytes.Buffer
	if err := Write(&page, Run{Workload: "cluster"}, r); err != nil {
		t.Fatal(err)
	}
	text := page.String()
	for _, want := range []string{"PASS", `<svg id="timeline"`, `<table id="ops">`, "lead controller"} {
		if !strings.Contains(text, want) {
			t.Errorf("the report lacks %q", want)
		}
	}
	if strings.Contains(text, "<iframe") {
		t.Error("a passing run's report embeds a porcupine frame")
	}
}

// TestTimelineShowsWhatEachGroupMemberOwned builds the group rows from a
// small history: one bar per generation a member was assigned, ending at
// its next assignment or at the info that ended its process.
func TestTimelineShowsWhatEachGroupMemberOwned(t *testing.T) {
	orders := func(ps ...int32) []history.TopicPartition {
		var tps []history.TopicPartition
		for _, p := range ps {
			tps = append(tps, history.TopicPartition{Topic: "orders", Partition: p})
		}
		return tps
	}
	subscribe := func(index, process int, at time.Duration, member string, generation int32, assigned []history.TopicPartition) history.Op {
		return history.Op{Index: index, Process: process, Type: history.OK, F: history.FuncSubscribe, Time: int64(at),
			Payload: history.Payload{Group: "g1", MemberID: member, Generation: generation, Assigned: assigned}}
	}
	recording := &sim.Recording{
		Clients: []string{"g1-c1", "g1-c10"},
		History: []history.Op{
			subscribe(0, 1, time.Second, "g1-c1-5b81", 1, orders(0, 1, 3)),
			subscribe(1, 2, time.Second, "g1-c10", 1, nil),
			subscribe(2, 1, 3*time.Second, "g1-c1-5b81", 2, orders(0)),
			{Index: 3, Process: 1, Type: history.Info, F: history.FuncCrash, Time: int64(5 * time.Second)},
		},
	}
	rows := groupRows(recording, 10*time.Second)
	type bar struct {
		from, to time.Duration
		text     string
	}
	var got [][]bar
	var names []string
	for _, r := range rows {
		names = append(names, r.name)
		var bars []bar
		for _, s := range r.spans {
			bars = append(bars, bar{s.from, s.to, s.text})
		}
		got = append(got, bars)
	}
	want := [][]bar{
		{{time.Second, 3 * time.Second, "g1 orders-0,1,3"}, {3 * time.Second, 5 * time.Second, "g2 orders-0"}},
		{{time.Second, 10 * time.Second, "g1 none"}},
	}
	if !slices.Equal(names, []string{"g1-c1 owns", "g1-c10 owns"}) || !slices.EqualFunc(got, want, slices.Equal) {
		t.Fatalf("rows %v %v, want %v", names, got, want)
	}
}

// TestTimelineShowsTwoLeadersOfOneEpoch draws the controller row of a
// quorum that elected two leaders in epoch 6: a hand-over from e5 to the
// first, then one red bar naming both, not a second hand-over.
func TestTimelineShowsTwoLeadersOfOneEpoch(t *testing.T) {
	leads := func(at time.Duration, node string, epoch int) sim.Event {
		return sim.Event{At: at, Kind: sim.EventController, Hosts: []string{node}, Text: fmt.Sprintf("%s leads the quorum in epoch %d", node, epoch)}
	}
	recording := &sim.Recording{
		Nodes:  []string{"n1", "n2", "n3"},
		Events: []sim.Event{leads(time.Second, "n3", 5), leads(2*time.Second, "n1", 6), leads(3*time.Second, "n2", 6)},
	}
	rows := buildRows(recording, 4*time.Second)
	i := slices.IndexFunc(rows, func(r row) bool { return r.name == "lead controller" })
	if i < 0 {
		t.Fatal("no controller row")
	}
	type bar struct {
		from, to    time.Duration
		class, text string
	}
	var got []bar
	for _, s := range rows[i].spans {
		got = append(got, bar{s.from, s.to, s.class, s.text})
	}
	want := []bar{
		{time.Second, 2 * time.Second, "lead n3", "n3 e5"},
		{2 * time.Second, 4 * time.Second, "lead conflict", "n1+n2 e6 (two leaders)"},
	}
	if !slices.Equal(got, want) {
		t.Fatalf("controller row %+v, want %+v", got, want)
	}
}

// A recreated topic's partition starts again at leader epoch 0, maybe on
// another node: a hand-over, not two leaders.
func TestTimelineHandsARecreatedPartitionOver(t *testing.T) {
	leads := func(at time.Duration, node string) sim.Event {
		return sim.Event{At: at, Kind: sim.EventLeader, Label: "scratch-0", Hosts: []string{node}, Text: "leads scratch-0 in epoch 0"}
	}
	recording := &sim.Recording{Nodes: []string{"n2", "n4"}, Events: []sim.Event{leads(time.Second, "n2"), leads(2*time.Second, "n4")}}
	rows := buildRows(recording, 3*time.Second)
	i := slices.IndexFunc(rows, func(r row) bool { return r.name == "lead scratch-0" })
	if i < 0 {
		t.Fatal("no row for scratch-0")
	}
	var texts []string
	for _, s := range rows[i].spans {
		texts = append(texts, fmt.Sprintf("%s %s %v-%v", s.class, s.text, s.from, s.to))
	}
	if want := []string{"lead n2 n2 e0 1s-2s", "lead n4 n4 e0 2s-3s"}; !slices.Equal(texts, want) {
		t.Fatalf("scratch-0's row %q, want %q", texts, want)
	}
}
