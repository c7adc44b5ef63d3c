package report

import (
	"fmt"
	"html"
	"io"
	"slices"
	"strings"
	"time"

	"sluice/sim"
)

// The timeline is one SVG: a row per node and per client showing when it
// was down and which faults held it, a row per group member showing what
// it owned in which generation, then a row per partition and one for the
// metadata quorum showing who led, in which epoch. Every shape has a
// <title>, so hovering names the fault and its times.

// Layout of the timeline, in SVG pixels.
const (
	timelineLabelWidth = 150
	timelinePlotWidth  = 1100
	timelineRowHeight  = 24
	timelineTopMargin  = 28
	// timelineRightMargin leaves room for the violation's label.
	timelineRightMargin = 70
	// timelineTicksMax bounds the time axis's ticks.
	timelineTicksMax = 25
)

// span is one bar of the timeline.
type span struct {
	from, to time.Duration
	class    string // CSS class: down, network, pause, disk, clock, client, crash, lead
	text     string // drawn inside the bar when it fits
	title    string // tooltip
}

// row is one line of the timeline.
type row struct {
	name  string
	spans []span
	// ticks are instant events: a clock jump, a reset, a start.
	ticks []span
}

// faultClass is the colour family of a fault, from its label's kind.
func faultClass(label string) string {
	switch {
	case strings.HasPrefix(label, "crash"), strings.HasPrefix(label, "power-loss"), strings.HasPrefix(label, "fail-fsync"):
		return "crash"
	case strings.HasPrefix(label, "pause"):
		return "pause"
	case strings.HasPrefix(label, "slow-disk"), strings.HasPrefix(label, "full-disk"):
		return "disk"
	case strings.HasPrefix(label, "clock"):
		return "clock"
	case strings.HasPrefix(label, "client-"):
		return "client"
	}
	return "network"
}

// buildRows turns a recording into timeline rows, ending every open bar at
// end.
func buildRows(recording *sim.Recording, end time.Duration) []row {
	rows := map[string]*row{}
	var order []string
	get := func(name string) *row {
		if r, ok := rows[name]; ok {
			return r
		}
		r := &row{name: name}
		rows[name] = r
		order = append(order, name)
		return r
	}
	for _, n := range recording.Nodes {
		get(n)
	}
	for _, c := range recording.Clients {
		get(c)
	}
	type open struct {
		at    time.Duration
		hosts []string
	}
	faults := map[string]open{}
	downSince := map[string]time.Duration{}
	// leading: who leads each partition ("controller" for the quorum)
	// since when.
	type leading struct {
		node     string
		epoch    string
		text     string
		since    time.Duration
		conflict bool // a second node led the same epoch
	}
	var leaderRows []string
	leaders := map[string]leading{}
	closeLeader := func(key string, at time.Duration) {
		if l, ok := leaders[key]; ok {
			class := "lead " + l.node
			if l.conflict {
				class = "lead conflict"
			}
			get("lead " + key).spans = append(get("lead "+key).spans, span{from: l.since, to: at, class: class, text: l.text, title: fmt.Sprintf("%s leads %s from %s to %s", l.text, key, seconds(l.since), seconds(at))})
			delete(leaders, key)
		}
	}
	for _, e := range recording.Events {
		switch e.Kind {
		case sim.EventFaultStart:
			faults[e.Label] = open{at: e.At, hosts: e.Hosts}
		case sim.EventFaultEnd:
			f, ok := faults[e.Label]
			if !ok {
				continue
			}
			delete(faults, e.Label)
			for _, h := range f.hosts {
				get(h).spans = append(get(h).spans, span{from: f.at, to: e.At, class: faultClass(e.Label), text: e.Label, title: fmt.Sprintf("%s from %s to %s", e.Label, seconds(f.at), seconds(e.At))})
			}
		case sim.EventFault:
			for _, h := range e.Hosts {
				get(h).ticks = append(get(h).ticks, span{from: e.At, class: faultClass(e.Label), title: fmt.Sprintf("%s at %s", e.Text, seconds(e.At))})
			}
		case sim.EventCrash, sim.EventHalt:
			for _, h := range e.Hosts {
				if _, down := downSince[h]; !down {
					downSince[h] = e.At
				}
			}
			// A node that dies leads nothing from then on.
			for _, key := range slices.Sorted(mapKeys(leaders)) {
				if slices.Contains(e.Hosts, leaders[key].node) {
					closeLeader(key, e.At)
				}
			}
		case sim.EventStart:
			for _, h := range e.Hosts {
				if since, down := downSince[h]; down {
					get(h).spans = append(get(h).spans, span{from: since, to: e.At, class: "down", text: "down", title: fmt.Sprintf("%s down from %s to %s", h, seconds(since), seconds(e.At))})
					delete(downSince, h)
				}
				get(h).ticks = append(get(h).ticks, span{from: e.At, class: "start", title: fmt.Sprintf("%s at %s", e.Text, seconds(e.At))})
			}
		case sim.EventLeader, sim.EventController:
			key := e.Label
			if e.Kind == sim.EventController {
				key = "controller"
			}
			if !slices.Contains(leaderRows, key) {
				leaderRows = append(leaderRows, key)
			}
			node := ""
			if len(e.Hosts) > 0 {
				node = e.Hosts[0]
			}
			epoch := epochOf(e.Text)
			if l, ok := leaders[key]; ok && e.Kind == sim.EventController && epoch != "" && l.epoch == epoch && l.node != node {
				// A second leader of the quorum in one epoch: the bar
				// says so rather than hand over, since neither stepped
				// down. (A partition's epochs start again at 0 when its
				// topic is recreated, so only the quorum's are compared.)
				l.text = fmt.Sprintf("%s+%s %s (two leaders)", l.node, node, epoch)
				l.conflict = true
				leaders[key] = l
				continue
			}
			closeLeader(key, e.At)
			leaders[key] = leading{node: node, epoch: epoch, text: node + " " + epoch, since: e.At}
		}
	}
	for _, label := range slices.Sorted(mapKeys(faults)) {
		f := faults[label]
		for _, h := range f.hosts {
			get(h).spans = append(get(h).spans, span{from: f.at, to: end, class: faultClass(label), text: label, title: fmt.Sprintf("%s from %s, never ended", label, seconds(f.at))})
		}
	}
	for _, h := range slices.Sorted(mapKeys(downSince)) {
		get(h).spans = append(get(h).spans, span{from: downSince[h], to: end, class: "down", text: "down", title: fmt.Sprintf("%s down from %s to the end", h, seconds(downSince[h]))})
	}
	slices.Sort(leaderRows)
	if i := slices.Index(leaderRows, "controller"); i > 0 {
		leaderRows = append([]string{"controller"}, slices.Delete(leaderRows, i, i+1)...)
	}
	for _, key := range leaderRows {
		closeLeader(key, end)
	}
	var out []row
	for _, name := range order {
		if !strings.HasPrefix(name, "lead ") {
			out = append(out, *rows[name])
		}
	}
	out = append(out, groupRows(recording, end)...)
	for _, key := range leaderRows {
		out = append(out, *get("lead " + key))
	}
	return out
}

// epochOf picks "epoch N" out of a leader event's text, as "eN".
func epochOf(text string) string {
	i := strings.LastIndex(text, "epoch ")
	if i < 0 {
		return ""
	}
	return "e" + text[i+len("epoch "):]
}

func mapKeys[V any](m map[string]V) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

func seconds(d time.Duration) string { return fmt.Sprintf("%.3fs", d.Seconds()) }

// writeTimeline draws the rows as SVG, with the phases and the violation
// as vertical lines.
//
// opMarks are the failing finding's operations, drawn as thin lines
// labelled "op N", so the timeline shows what the cluster was going
// through when the acknowledgement, or the read, that broke the check
// happened.
func writeTimeline(w io.Writer, recording *sim.Recording, end time.Duration, violationAt time.Duration, opMarks []opMark) {
	if end <= 0 {
		end = time.Second
	}
	rows := buildRows(recording, end)
	height := timelineTopMargin + len(rows)*timelineRowHeight + 10
	width := timelineLabelWidth + timelinePlotWidth + timelineRightMargin
	x := func(t time.Duration) float64 {
		return timelineLabelWidth + float64(t)/float64(end)*timelinePlotWidth
	}
	fmt.Fprintf(w, `<svg id="timeline" xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d">`+"\n", width, height, width, height)
	step := tickStep(end)
	for t := time.Duration(0); t <= end; t += step {
		fmt.Fprintf(w, `<line class="grid" x1="%.1f" y1="%d" x2="%.1f" y2="%d"/><text class="axis" x="%.1f" y="14">%s</text>`+"\n",
			x(t), timelineTopMargin-6, x(t), height-10, x(t)+2, html.EscapeString(t.String()))
	}
	for i, r := range rows {
		y := timelineTopMargin + i*timelineRowHeight
		fmt.Fprintf(w, `<text class="rowname" x="4" y="%d">%s</text><line class="rowline" x1="%d" y1="%d" x2="%d" y2="%d"/>`+"\n",
			y+16, html.EscapeString(r.name), timelineLabelWidth, y+timelineRowHeight, timelineLabelWidth+timelinePlotWidth, y+timelineRowHeight)
		for _, s := range r.spans {
			x1, x2 := x(s.from), x(s.to)
			if x2-x1 < 1.5 {
				x2 = x1 + 1.5
			}
			fmt.Fprintf(w, `<g class="%s"><rect x="%.1f" y="%d" width="%.1f" height="%d"><title>%s</title></rect>`,
				html.EscapeString(s.class), x1, y+3, x2-x1, timelineRowHeight-6, html.EscapeString(s.title))
			if float64(len(s.text))*6.2 < x2-x1 {
				fmt.Fprintf(w, `<text x="%.1f" y="%d">%s</text>`, x1+3, y+16, html.EscapeString(s.text))
			}
			fmt.Fprintln(w, `</g>`)
		}
		for _, s := range r.ticks {
			fmt.Fprintf(w, `<g class="tick %s"><rect x="%.1f" y="%d" width="3" height="%d"><title>%s</title></rect></g>`+"\n",
				html.EscapeString(s.class), x(s.from)-1, y+1, timelineRowHeight-2, html.EscapeString(s.title))
		}
	}
	mark := func(at time.Duration, class, text string) {
		fmt.Fprintf(w, `<line class="%s" x1="%.1f" y1="%d" x2="%.1f" y2="%d"><title>%s at %s</title></line><text class="%s" x="%.1f" y="%d">%s</text>`+"\n",
			class, x(at), timelineTopMargin-6, x(at), height-10, html.EscapeString(text), seconds(at), class, x(at)+3, timelineTopMargin-8, html.EscapeString(text))
	}
	if recording.SafetyStart > 0 {
		mark(recording.SafetyStart, "phase", "safety")
	}
	if recording.LivenessStart > 0 {
		mark(recording.LivenessStart, "phase", "liveness")
	}
	if violationAt >= 0 {
		mark(violationAt, "violation", "violation")
	}
	for i, op := range opMarks {
		fmt.Fprintf(w, `<line class="culprit-op" x1="%.1f" y1="%d" x2="%.1f" y2="%d"><title>op %d (%s) at %s</title></line><text class="culprit-op" x="%.1f" y="%d">op %d</text>`+"\n",
			x(op.at), timelineTopMargin, x(op.at), height-10, op.index, html.EscapeString(op.text), seconds(op.at), x(op.at)+2, height-12-(i%3)*11, op.index)
	}
	fmt.Fprintln(w, `</svg>`)
}

// opMark is one operation of the failing finding on the timeline.
type opMark struct {
	at    time.Duration
	index int
	text  string
}

// opMarksOf finds the marked operations' times in the history.
func opMarksOf(recording *sim.Recording, marked map[int]bool) []opMark {
	var marks []opMark
	if recording == nil {
		return nil
	}
	for _, op := range recording.History {
		if marked[op.Index] {
			marks = append(marks, opMark{at: time.Duration(op.Time), index: op.Index, text: op.Type.String() + " " + op.F.String() + " " + describe(op.Payload)})
		}
	}
	return marks
}

// tickStep picks a round axis step that gives at most timelineTicksMax
// ticks.
func tickStep(end time.Duration) time.Duration {
	for _, step := range []time.Duration{100 * time.Millisecond, 250 * time.Millisecond, 500 * time.Millisecond, time.Second, 2 * time.Second, 5 * time.Second, 10 * time.Second, 30 * time.Second, time.Minute} {
		if end/step <= timelineTicksMax {
			return step
		}
	}
	return end / timelineTicksMax
}
