package report

import (
	"bytes"
	"fmt"
	"html"
	"io"
	"strings"
	"time"

	"sluice/jepsen/checker"
	"sluice/sim"
)

// Run is what the page says besides the result: how the run was made.
type Run struct {
	Workload string
	Canaries []string
	// Replay is the command that runs the seed again.
	Replay string
}

// Write writes the page for one run. The result must carry a Recording
// (run it with RunOptions.Record); a workload that keeps none gets a page
// with the verdict and the options only.
func Write(w io.Writer, run Run, r sim.Result) error {
	var b bytes.Buffer
	recording := r.Recording
	c := findCulprit(r)
	end := r.SimTime
	violationAt := time.Duration(-1)
	if recording != nil {
		for _, e := range recording.Events {
			end = max(end, e.At)
			if e.Kind == sim.EventViolation && violationAt < 0 {
				violationAt = e.At
			}
		}
	}
	// A little room past the last event: a run stops at its violation,
	// and what happened at that instant (a second leader) needs width
	// to be seen.
	end += end / 40

	title := fmt.Sprintf("sluice sim: %s seed %d", run.Workload, r.Seed)
	fmt.Fprintf(&b, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>%s</title>\n<style>%s</style>\n<script>%s</script></head><body>\n",
		html.EscapeString(title), style, filterScript)
	fmt.Fprintf(&b, "<h1>%s</h1>\n", html.EscapeString(title))
	writeVerdict(&b, run, r, c)

	fmt.Fprintln(&b, `<h2 id="timeline-section">Timeline</h2>`)
	if recording == nil {
		fmt.Fprintf(&b, "<p>The %s workload keeps no recording: no timeline.</p>\n", html.EscapeString(run.Workload))
	} else {
		fmt.Fprintln(&b, `<p class="legend">Rows: each node, each client, what each group member owned in which generation (gN), then who led each partition and the metadata quorum (the controller), in which epoch. <span class="key down">down</span> <span class="key crash">crash / power loss / failed fsync</span> <span class="key network">network fault</span> <span class="key pause">pause</span> <span class="key disk">disk fault</span> <span class="key clock">clock fault</span> <span class="key client">client fault</span>; thin marks are instants (a start, a jump, a reset); a red leader bar is two nodes leading one epoch; pink dashed lines are the failing finding's operations. Hover for times.</p>`)
		writeTimeline(&b, recording, end, violationAt, opMarksOf(recording, c.Ops))
	}

	fmt.Fprintln(&b, `<h2 id="porcupine-section">Linearizability (porcupine)</h2>`)
	writePorcupine(&b, r, c)

	fmt.Fprintln(&b, `<h2 id="operations-section">Client operations</h2>`)
	switch {
	case recording == nil:
		fmt.Fprintf(&b, "<p>The %s workload keeps no recording: no operations to list.</p>\n", html.EscapeString(run.Workload))
	case len(recording.History) == 0:
		fmt.Fprintln(&b, "<p>No client history was checked: the run stopped before its checks, or its workload has no Kafka clients (the quorum and log workloads check the nodes' own state against a model).</p>")
	default:
		writeOperations(&b, recording.History, c.Ops)
	}

	if recording != nil {
		fmt.Fprintln(&b, `<h2 id="events-section">Events</h2><details><summary>every recorded event, in time order</summary><pre>`)
		for _, e := range recording.Events {
			fmt.Fprintf(&b, "%10s  %-11s %s\n", seconds(e.At), e.Kind, html.EscapeString(e.Text))
		}
		if recording.Dropped > 0 {
			fmt.Fprintf(&b, "... %d more events not recorded\n", recording.Dropped)
		}
		fmt.Fprintln(&b, "</pre></details>")
	}
	fmt.Fprintln(&b, `<h2 id="options-section">What the seed chose</h2><details open><summary>options and stats</summary><table class="options">`)
	for _, o := range append(append([]sim.Option{}, r.Options...), r.Stats...) {
		fmt.Fprintf(&b, "<tr><th>%s</th><td>%s</td></tr>\n", html.EscapeString(o.Name), html.EscapeString(strings.ReplaceAll(o.Value, ",", ", ")))
	}
	fmt.Fprintln(&b, "</table></details>\n<script>filterOps && document.getElementById('filter') && filterOps();</script>\n</body></html>")
	_, err := w.Write(b.Bytes())
	return err
}

// writeVerdict writes the outcome: pass, or the failing check, its
// detail, and what it points at.
func writeVerdict(b *bytes.Buffer, run Run, r sim.Result, c culprit) {
	fmt.Fprintln(b, `<h2 id="verdict-section">Verdict</h2>`)
	if r.Passed() {
		fmt.Fprintln(b, `<p class="pass">PASS: every check held.</p>`)
	} else {
		fmt.Fprintf(b, "<p class=\"fail\">FAIL: check <b id=\"failed-check\">%s</b></p>\n<p class=\"detail\">%s</p>\n", html.EscapeString(r.Check), html.EscapeString(r.Detail))
		if c.Partition.Topic != "" || c.Group != "" {
			fmt.Fprint(b, "<p>Failing ")
			if c.Group != "" {
				fmt.Fprintf(b, "group <b id=\"failing-group\">%s</b> ", html.EscapeString(c.Group))
			}
			if c.Partition.Topic != "" {
				fmt.Fprintf(b, "partition <b id=\"failing-partition\">%s</b>", html.EscapeString(c.Partition.String()))
			}
			fmt.Fprintln(b, "</p>")
		}
		if c.Finding != nil {
			fmt.Fprintf(b, "<p>First finding: %s. Its operations are marked in the table below.</p>\n", html.EscapeString(c.Finding.String()))
		}
	}
	fmt.Fprintln(b, `<table class="options">`)
	rows := [][2]string{
		{"workload", run.Workload},
		{"seed", fmt.Sprint(r.Seed)},
		{"canaries", strings.Join(run.Canaries, ", ")},
		{"replay", run.Replay},
		{"simulated time", r.SimTime.String()},
		{"events", fmt.Sprint(r.Steps)},
		{"trace hash", r.TraceHash},
	}
	for _, row := range rows {
		if row[1] == "" {
			row[1] = "none"
		}
		fmt.Fprintf(b, "<tr><th>%s</th><td><code>%s</code></td></tr>\n", row[0], html.EscapeString(row[1]))
	}
	fmt.Fprintln(b, "</table>")
}

// writePorcupine embeds porcupine's visualization of the failing
// partition's log (or the failing group's committed offset of it) in an
// iframe's srcdoc: porcupine's page is self-contained, and srcdoc keeps
// it in this one file.
func writePorcupine(b *bytes.Buffer, r sim.Result, c culprit) {
	recording := r.Recording
	switch {
	case r.Passed():
		fmt.Fprintln(b, "<p>The run passed: no history to draw.</p>")
		return
	case recording == nil:
		fmt.Fprintln(b, "<p>This workload keeps no recording: nothing to draw.</p>")
		return
	case len(recording.History) == 0:
		fmt.Fprintln(b, "<p>No client history was checked: nothing to draw.</p>")
		return
	case c.Partition.Topic == "":
		fmt.Fprintf(b, "<p>Check %s names no partition: nothing to draw.</p>\n", html.EscapeString(r.Check))
		return
	}
	var page bytes.Buffer
	var err error
	what := fmt.Sprintf("the log of partition %s", c.Partition)
	if committedOffsetCheck(r.Check) && c.Group != "" {
		what = fmt.Sprintf("group %s's committed offset of %s", c.Group, c.Partition)
		err = checker.VisualizeCommittedOffset(recording.History, c.Group, c.Partition, recording.Checker, &page)
	} else {
		err = checker.VisualizeLog(recording.History, c.Partition, recording.Checker, &page)
	}
	if err != nil {
		fmt.Fprintf(b, "<p>Porcupine could not draw %s: %s</p>\n", html.EscapeString(what), html.EscapeString(err.Error()))
		return
	}
	fmt.Fprintf(b, "<p>Porcupine's search over %s: each bar is an operation, from its call to its return; the longest linearizable prefix is highlighted, and the operations it could not place are where the history breaks the model.</p>\n", html.EscapeString(what))
	fmt.Fprintf(b, "<iframe id=\"porcupine\" title=\"porcupine: %s\" srcdoc=\"%s\"></iframe>\n", html.EscapeString(what), html.EscapeString(page.String()))
}

func durationOf(nanoseconds int64) time.Duration { return time.Duration(nanoseconds) }

const style = `
body { font: 14px/1.4 system-ui, sans-serif; margin: 1em 2em; color: #222; }
h1 { font-size: 1.4em; } h2 { font-size: 1.15em; margin-top: 1.6em; border-bottom: 1px solid #ccc; }
.pass { color: #1a7f37; font-weight: bold; } .fail { color: #c62828; font-weight: bold; font-size: 1.1em; }
.detail { font-family: monospace; white-space: pre-wrap; background: #fff3f3; padding: .5em; }
table.options th { text-align: left; padding-right: 1em; font-weight: normal; color: #555; vertical-align: top; }
table.options td { font-family: monospace; }
#ops { border-collapse: collapse; font-family: monospace; font-size: 12px; }
#ops td, #ops th { border-bottom: 1px solid #eee; padding: 1px 6px; text-align: left; vertical-align: top; }
#ops tr.fail td { color: #999; } #ops tr.info td { color: #a15c00; }
#ops tr.culprit td { background: #ffe0e0; }
iframe#porcupine { width: 100%; height: 700px; border: 1px solid #ccc; }
svg text { font: 11px sans-serif; } svg .axis { fill: #666; } svg .rowname { font-weight: bold; }
svg .grid { stroke: #eee; } svg .rowline { stroke: #f3f3f3; }
svg g rect { opacity: .75; } svg g text { fill: #111; pointer-events: none; }
.down rect, .key.down { fill: #9e9e9e; background: #9e9e9e; }
.crash rect, .key.crash { fill: #e53935; background: #e53935; }
.network rect, .key.network { fill: #fb8c00; background: #fb8c00; }
.pause rect, .key.pause { fill: #8e24aa; background: #8e24aa; }
.disk rect, .key.disk { fill: #6d4c41; background: #6d4c41; }
.clock rect, .key.clock { fill: #1e88e5; background: #1e88e5; }
.client rect, .key.client { fill: #00897b; background: #00897b; }
.tick.start rect { fill: #2e7d32; }
.owns.g0 rect { fill: #c5e1a5; } .owns.g1 rect { fill: #b3e5fc; }
.lead rect { fill: #90caf9; } .lead.n1 rect { fill: #a5d6a7; } .lead.n2 rect { fill: #90caf9; } .lead.n3 rect { fill: #ffe082; }
.lead.n4 rect { fill: #ce93d8; } .lead.n5 rect { fill: #80deea; } .lead.n6 rect { fill: #ffab91; } .lead.n7 rect { fill: #e6ee9c; }
.lead.conflict rect { fill: #e53935; }
.key { color: #fff; padding: 0 .4em; border-radius: 3px; }
line.phase { stroke: #2e7d32; stroke-dasharray: 4 3; } text.phase { fill: #2e7d32; }
line.culprit-op { stroke: #d81b60; stroke-dasharray: 2 2; } text.culprit-op { fill: #d81b60; font-weight: bold; }
line.violation { stroke: #c62828; stroke-width: 2; } text.violation { fill: #c62828; font-weight: bold; }
`
