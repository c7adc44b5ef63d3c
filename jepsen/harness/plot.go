package harness

import (
	"fmt"
	"html"
	"math"
	"slices"
	"strings"
	"time"

	"sluice/jepsen/checker"
	"sluice/jepsen/history"
)

// Plot sizes and bounds.
const (
	plotWidth  = 1100
	plotHeight = 320
	// plotMargin{Left,Right,Top,Bottom} leave room for the axes' labels.
	plotMarginLeft   = 70
	plotMarginRight  = 20
	plotMarginTop    = 30
	plotMarginBottom = 40
	// plotDotsMax bounds the dots of one series; beyond it every k-th is
	// drawn, so a long run's page stays light.
	plotDotsMax = 20_000
	// throughputBucket is the width of one throughput bar.
	throughputBucket = time.Second
)

// faultColors shade each kind of fault window.
var faultColors = map[FaultKind]string{
	FaultKill: "#d62728", FaultPause: "#9467bd", FaultPartition: "#ff7f0e", FaultRolling: "#2ca02c",
	FaultFullKill: "#8c564b", FaultSlow: "#17becf", FaultClients: "#e377c2",
}

// point is one (x, y) of a chart: seconds since the run began, a value.
type point struct{ x, y float64 }

// series is one set of points drawn the same way.
type series struct {
	name   string
	color  string
	line   bool // a line through the points; else dots
	points []point
}

// reportPage is the results folder's report.html: one self-contained
// page (inline SVG, no script, nothing fetched) with the verdict, the
// send latencies over time and the throughput over time, fault windows
// shaded on both, and the list of faults.
func reportPage(result *Result, ops []history.Op) string {
	latencies, throughput := plotSeries(ops, workloadEnd(result))
	end := 0.0
	if n := len(ops); n > 0 {
		end = time.Duration(ops[n-1].Time).Seconds()
	}
	for _, f := range result.Faults {
		end = max(end, f.End.Seconds())
	}
	var b strings.Builder
	verdict, color := "PASS", "#2ca02c"
	if !result.Pass {
		verdict, color = "FAIL", "#d62728"
	}
	b.WriteString("<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>sluice jepsen: " + verdict + "</title>\n")
	b.WriteString("<style>body{font-family:sans-serif;margin:24px;color:#222}h1 span{color:" + color + "}pre{background:#f6f6f6;padding:8px;overflow-x:auto}svg{background:#fff;border:1px solid #ddd;margin-bottom:16px}td{padding:0 10px 0 0}</style></head><body>\n")
	fmt.Fprintf(&b, "<h1>sluice jepsen: <span>%s</span></h1>\n<p>%s</p>\n", verdict, html.EscapeString(result.Report.Summary()))
	if permitted := permittedFindings(result.Report); permitted > 0 {
		fmt.Fprintf(&b, "<p><b>%d findings are permitted losses</b>: the workload's settings allow losing acknowledged writes (acks=1, min.insync.replicas=1 or unclean elections), so they are reported, not failed.</p>\n", permitted)
	}
	fmt.Fprintf(&b, "<p>%s</p>\n", html.EscapeString(result.Stats.String()))
	if len(result.Problems) > 0 {
		b.WriteString("<h3>Problems outside the checkers</h3><ul>")
		for _, p := range result.Problems {
			fmt.Fprintf(&b, "<li>%s</li>", html.EscapeString(p))
		}
		b.WriteString("</ul>\n")
	}
	b.WriteString("<h2>Send latency over time</h2>\n")
	b.WriteString(chartSVG("latency of each send, invoke to answer (ms, log scale)", end, true, result.Faults, latencies))
	b.WriteString("<h2>Throughput over time</h2>\n")
	b.WriteString(chartSVG("per second", end, false, result.Faults, throughput))
	b.WriteString("<h2>Faults</h2>\n<table>")
	for _, f := range result.Faults {
		fmt.Fprintf(&b, "<tr><td><span style=\"color:%s\">■</span> %s</td><td>%.1fs – %.1fs</td><td>nodes %v</td><td>%s</td><td style=\"color:#d62728\">%s</td></tr>\n",
			faultColors[f.Kind], f.Kind, f.Start.Seconds(), f.End.Seconds(), f.Nodes, html.EscapeString(f.Detail), html.EscapeString(f.Error))
	}
	b.WriteString("</table>\n<h2>Files</h2>\n<ul>")
	for _, name := range []string{VerdictFile, HistoryFile, FaultsFile, "nodes/"} {
		fmt.Fprintf(&b, "<li><a href=\"%s\">%s</a></li>", name, name)
	}
	for _, tp := range nonlinearizablePartitions(result.Report) {
		name := "porcupine-" + tp.String() + ".html"
		fmt.Fprintf(&b, "<li><a href=\"%s\">%s</a> (porcupine's view of the partition)</li>", name, name)
	}
	b.WriteString("</ul>\n<h2>Checker report</h2>\n<pre>" + html.EscapeString(result.Report.String()) + "</pre>\n</body></html>\n")
	return b.String()
}

// workloadEnd is when the final read began (the clients had stopped):
// the throughput plot leaves that read out, whose burst would flatten
// everything else. Zero means the whole history.
func workloadEnd(result *Result) time.Duration {
	for _, p := range result.Phases {
		if p.Name == drainPhaseName {
			return p.Start
		}
	}
	return 0
}

// permittedFindings counts the findings the configuration permits.
func permittedFindings(report checker.Report) int {
	total := 0
	for _, class := range report.Classes {
		total += class.Permitted
	}
	return total
}

// plotSeries extracts the send latencies (one dot per completed send,
// by outcome) and the throughput (acknowledged and unknown sends, and
// records the workload's consumers polled, per second) from a history,
// up to end (zero: all of it).
func plotSeries(ops []history.Op, end time.Duration) (latencies, throughput []series) {
	invoked := map[int]int64{}
	byType := map[history.Type]*series{
		history.OK:   {name: "ok", color: "#1f77b4"},
		history.Info: {name: "unknown (info)", color: "#ff7f0e"},
		history.Fail: {name: "failed", color: "#d62728"},
	}
	buckets := map[string]map[int]float64{"acknowledged sends": {}, "unknown sends": {}, "records polled": {}}
	last := 0
	for _, op := range ops {
		if end > 0 && time.Duration(op.Time) >= end {
			break
		}
		second := int(time.Duration(op.Time) / throughputBucket)
		last = max(last, second)
		switch {
		case op.F == history.FuncSend && op.Type == history.Invoke:
			invoked[op.Process] = op.Time
		case op.F == history.FuncSend:
			start := invoked[op.Process]
			s := byType[op.Type]
			latency := float64(op.Time-start) / float64(time.Millisecond)
			s.points = append(s.points, point{x: time.Duration(start).Seconds(), y: max(latency, 0.1)})
			if op.Type == history.OK {
				buckets["acknowledged sends"][second]++
			} else {
				buckets["unknown sends"][second]++
			}
		case op.F == history.FuncPoll && op.Type == history.OK:
			for _, poll := range op.Polls {
				buckets["records polled"][second] += float64(len(poll.Records))
			}
		}
	}
	for _, t := range []history.Type{history.OK, history.Info, history.Fail} {
		s := byType[t]
		if len(s.points) > plotDotsMax {
			step := (len(s.points) + plotDotsMax - 1) / plotDotsMax
			var kept []point
			for i := 0; i < len(s.points); i += step {
				kept = append(kept, s.points[i])
			}
			s.name = fmt.Sprintf("%s (1 in %d shown)", s.name, step)
			s.points = kept
		}
		latencies = append(latencies, *s)
	}
	colors := map[string]string{"acknowledged sends": "#1f77b4", "unknown sends": "#ff7f0e", "records polled": "#2ca02c"}
	for _, name := range []string{"acknowledged sends", "unknown sends", "records polled"} {
		s := series{name: name, color: colors[name], line: true}
		for second := 0; second <= last; second++ {
			s.points = append(s.points, point{x: float64(second) + 0.5, y: buckets[name][second]})
		}
		throughput = append(throughput, s)
	}
	return latencies, throughput
}

// chartSVG draws one chart: time on x from 0 to end seconds, fault
// windows shaded behind the data, a legend of series and fault kinds.
func chartSVG(yLabel string, end float64, logY bool, faults []FaultWindow, data []series) string {
	end = max(end, 1)
	yMax := 1.0
	for _, s := range data {
		for _, p := range s.points {
			yMax = max(yMax, p.y)
		}
	}
	yMin := 0.0
	if logY {
		yMin, yMax = 0.1, math.Pow(10, math.Ceil(math.Log10(yMax)))
	} else {
		yMax = niceCeiling(yMax)
	}
	innerWidth := float64(plotWidth - plotMarginLeft - plotMarginRight)
	innerHeight := float64(plotHeight - plotMarginTop - plotMarginBottom)
	x := func(seconds float64) float64 { return plotMarginLeft + seconds/end*innerWidth }
	y := func(value float64) float64 {
		fraction := value / yMax
		if logY {
			fraction = (math.Log10(max(value, yMin)) - math.Log10(yMin)) / (math.Log10(yMax) - math.Log10(yMin))
		}
		return plotMarginTop + (1-fraction)*innerHeight
	}
	var b strings.Builder
	fmt.Fprintf(&b, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" font-size=\"11\">\n", plotWidth, plotHeight)
	for _, f := range faults {
		left, right := x(f.Start.Seconds()), x(f.End.Seconds())
		fmt.Fprintf(&b, "<rect x=\"%.1f\" y=\"%d\" width=\"%.1f\" height=\"%.0f\" fill=\"%s\" fill-opacity=\"0.18\"><title>%s %v: %s</title></rect>\n",
			left, plotMarginTop, max(right-left, 1), innerHeight, faultColors[f.Kind], f.Kind, f.Nodes, html.EscapeString(f.Detail))
		fmt.Fprintf(&b, "<text x=\"%.1f\" y=\"%d\" fill=\"%s\">%s</text>\n", left+2, plotMarginTop+10, faultColors[f.Kind], f.Kind)
	}
	// Axes and ticks.
	fmt.Fprintf(&b, "<line x1=\"%d\" y1=\"%.0f\" x2=\"%d\" y2=\"%.0f\" stroke=\"#444\"/>\n", plotMarginLeft, plotMarginTop+innerHeight, plotWidth-plotMarginRight, plotMarginTop+innerHeight)
	fmt.Fprintf(&b, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%.0f\" stroke=\"#444\"/>\n", plotMarginLeft, plotMarginTop, plotMarginLeft, plotMarginTop+innerHeight)
	step := niceCeiling(end / 12)
	for t := 0.0; t <= end; t += step {
		fmt.Fprintf(&b, "<line x1=\"%.1f\" y1=\"%.0f\" x2=\"%.1f\" y2=\"%.0f\" stroke=\"#444\"/><text x=\"%.1f\" y=\"%.0f\" text-anchor=\"middle\">%gs</text>\n",
			x(t), plotMarginTop+innerHeight, x(t), plotMarginTop+innerHeight+4, x(t), plotMarginTop+innerHeight+16, t)
	}
	var yTicks []float64
	if logY {
		for v := yMin; v <= yMax*1.001; v *= 10 {
			yTicks = append(yTicks, v)
		}
	} else {
		for v := 0.0; v <= yMax*1.001; v += yMax / 4 {
			yTicks = append(yTicks, v)
		}
	}
	for _, v := range yTicks {
		fmt.Fprintf(&b, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#eee\"/><text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%g</text>\n",
			plotMarginLeft, y(v), plotWidth-plotMarginRight, y(v), plotMarginLeft-4, y(v)+4, v)
	}
	fmt.Fprintf(&b, "<text x=\"12\" y=\"%d\" transform=\"rotate(-90 12 %d)\" text-anchor=\"middle\">%s</text>\n",
		plotMarginTop+int(innerHeight)/2, plotMarginTop+int(innerHeight)/2, html.EscapeString(yLabel))
	fmt.Fprintf(&b, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">time since the run began</text>\n", plotMarginLeft+int(innerWidth)/2, plotHeight-4)
	// Data.
	for _, s := range data {
		if s.line {
			var path strings.Builder
			for i, p := range s.points {
				command := "L"
				if i == 0 {
					command = "M"
				}
				fmt.Fprintf(&path, "%s%.1f %.1f", command, x(p.x), y(p.y))
			}
			fmt.Fprintf(&b, "<path d=\"%s\" fill=\"none\" stroke=\"%s\" stroke-width=\"1.5\"/>\n", path.String(), s.color)
			continue
		}
		fmt.Fprintf(&b, "<g fill=\"%s\" fill-opacity=\"0.6\">", s.color)
		for _, p := range s.points {
			fmt.Fprintf(&b, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"1.6\"/>", x(p.x), y(p.y))
		}
		b.WriteString("</g>\n")
	}
	// Legend: the series, then the fault kinds present.
	legendX := float64(plotMarginLeft + 10)
	for _, s := range data {
		label := s.name
		if !s.line {
			label = fmt.Sprintf("%s (%d)", s.name, len(s.points))
		}
		fmt.Fprintf(&b, "<rect x=\"%.0f\" y=\"8\" width=\"10\" height=\"10\" fill=\"%s\"/><text x=\"%.0f\" y=\"17\">%s</text>\n",
			legendX, s.color, legendX+14, html.EscapeString(label))
		legendX += 30 + 6.5*float64(len(label))
	}
	var kinds []FaultKind
	for _, f := range faults {
		if !slices.Contains(kinds, f.Kind) {
			kinds = append(kinds, f.Kind)
		}
	}
	for _, kind := range kinds {
		fmt.Fprintf(&b, "<rect x=\"%.0f\" y=\"8\" width=\"10\" height=\"10\" fill=\"%s\" fill-opacity=\"0.4\"/><text x=\"%.0f\" y=\"17\">%s</text>\n",
			legendX, faultColors[kind], legendX+14, kind)
		legendX += 30 + 6*float64(len(kind))
	}
	b.WriteString("</svg>\n")
	return b.String()
}

// niceCeiling rounds v up to 1, 2 or 5 times a power of ten.
func niceCeiling(v float64) float64 {
	if v <= 0 {
		return 1
	}
	power := math.Pow(10, math.Floor(math.Log10(v)))
	for _, m := range []float64{1, 2, 5, 10} {
		if m*power >= v {
			return m * power
		}
	}
	return 10 * power
}
