package main

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"sluice/jepsen/bench"
)

// row is one system at one record size: the median of each figure over
// the runs in which its phase succeeded.
type row struct {
	System      string `json:"system"`
	Label       string `json:"label"`
	RecordBytes int    `json:"record_bytes"`
	// Runs counts the runs each figure's median is over.
	ProduceRuns int `json:"produce_runs"`
	ConsumeRuns int `json:"consume_runs"`
	LatencyRuns int `json:"latency_runs"`

	ProduceRecordsPerSecond   float64       `json:"produce_records_per_second"`
	ProduceMegabytesPerSecond float64       `json:"produce_megabytes_per_second"`
	ConsumeRecordsPerSecond   float64       `json:"consume_records_per_second"`
	ConsumeMegabytesPerSecond float64       `json:"consume_megabytes_per_second"`
	AckP50                    time.Duration `json:"ack_p50_ns"`
	AckP99                    time.Duration `json:"ack_p99_ns"`
	EndToEndP99               time.Duration `json:"e2e_p99_ns"`
	Errors                    []string      `json:"errors,omitempty"`
}

// failedPhase reports whether the cell recorded an error in phase (or
// before any phase could run).
func failedPhase(c cell, phase string) bool {
	for _, e := range c.Errors {
		if strings.HasPrefix(e, phase+":") || strings.HasPrefix(e, "start:") || strings.HasPrefix(e, "set-up:") || strings.HasPrefix(e, "skipped:") {
			return true
		}
	}
	return false
}

func summarize(selected []system, sizes []int, cells []cell) []row {
	var rows []row
	for _, size := range sizes {
		for _, s := range selected {
			r := row{System: s.id, Label: s.label, RecordBytes: size}
			var produce, produceMB, consume, consumeMB, ackP50, ackP99, e2eP99 []float64
			for _, c := range cells {
				if c.System != s.id || c.RecordBytes != size {
					continue
				}
				for _, e := range c.Errors {
					if !slices.Contains(r.Errors, e) {
						r.Errors = append(r.Errors, e)
					}
				}
				if c.Produce != nil && !failedPhase(c, "produce") {
					produce = append(produce, c.Produce.RecordsPerSecond)
					produceMB = append(produceMB, c.Produce.MegabytesPerSecond)
				}
				if c.Consume != nil && !failedPhase(c, "consume") {
					consume = append(consume, c.Consume.RecordsPerSecond)
					consumeMB = append(consumeMB, c.Consume.MegabytesPerSecond)
				}
				if c.Latency != nil && !failedPhase(c, "latency") {
					ackP50 = append(ackP50, float64(c.Latency.Produce.Latency.P50))
					ackP99 = append(ackP99, float64(c.Latency.Produce.Latency.P99))
					e2eP99 = append(e2eP99, float64(c.Latency.Latency.P99))
				}
			}
			r.ProduceRuns, r.ConsumeRuns, r.LatencyRuns = len(produce), len(consume), len(ackP99)
			r.ProduceRecordsPerSecond, r.ProduceMegabytesPerSecond = median(produce), median(produceMB)
			r.ConsumeRecordsPerSecond, r.ConsumeMegabytesPerSecond = median(consume), median(consumeMB)
			r.AckP50, r.AckP99, r.EndToEndP99 = time.Duration(median(ackP50)), time.Duration(median(ackP99)), time.Duration(median(e2eP99))
			rows = append(rows, r)
		}
	}
	return rows
}

// median of values; 0 when there are none (the row's run counts say
// which figures exist).
func median(values []float64) float64 {
	if len(values) == 0 {
		return 0
	}
	sorted := slices.Clone(values)
	slices.Sort(sorted)
	middle := len(sorted) / 2
	if len(sorted)%2 == 1 {
		return sorted[middle]
	}
	return (sorted[middle-1] + sorted[middle]) / 2
}

func printTables(w io.Writer, h *harness, rows []row, sizes []int, runs int) {
	streams := "1 partition (NATS: 1 stream)"
	if h.settings.partitions != 1 {
		streams = fmt.Sprintf("%d partitions (NATS: %d streams)", h.settings.partitions, h.settings.partitions)
	}
	producers := "1 producer"
	if h.settings.producers != 1 {
		producers = fmt.Sprintf("%d producers", h.settings.producers)
	}
	for _, size := range sizes {
		fmt.Fprintf(w, "\n%d-byte records; %s, %s, acks=all / every publish acknowledged, at most %d unacknowledged per producer; median of %d run(s)\n",
			size, producers, streams, h.settings.pendingMax, runs)
		fmt.Fprintf(w, "produce: as fast as possible for %v after a %v warm-up, counting acknowledgements to the last one; consume: from the start, first record to last, at most %v;\n"+
			"latency: %s records/s for %v, from each record's intended send time to its acknowledgement (ack) and to a concurrent consumer (e2e)\n",
			h.phases.duration, h.phases.warmUp, h.phases.consumeMax, humanCount(h.phases.latencyRate), h.phases.duration)
		// Right-aligned numbers; labels padded to one width so they read
		// left-aligned.
		labelWidth := len("system")
		for _, r := range rows {
			labelWidth = max(labelWidth, len(r.Label))
		}
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintf(tw, "%-*s\tproduce rec/s\tMB/s\tconsume rec/s\tMB/s\tack p50\tack p99\te2e p99\t\n", labelWidth, "system")
		var notes []string
		for _, r := range rows {
			if r.RecordBytes != size {
				continue
			}
			fmt.Fprintf(tw, "%-*s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n", labelWidth, r.Label,
				rate(r.ProduceRecordsPerSecond, r.ProduceRuns), megabytes(r.ProduceMegabytesPerSecond, r.ProduceRuns),
				rate(r.ConsumeRecordsPerSecond, r.ConsumeRuns), megabytes(r.ConsumeMegabytesPerSecond, r.ConsumeRuns),
				latency(r.AckP50, r.LatencyRuns), latency(r.AckP99, r.LatencyRuns), latency(r.EndToEndP99, r.LatencyRuns))
			for _, e := range r.Errors {
				notes = append(notes, fmt.Sprintf("  %s: %s", r.System, shorten(e)))
			}
		}
		tw.Flush()
		if len(notes) > 0 {
			fmt.Fprintln(w, "errors (a failed phase is left out of its median; \"-\" when no run succeeded):")
			for _, n := range notes {
				fmt.Fprintln(w, n)
			}
		}
		printRatios(w, rows, size)
	}
}

func printRatios(w io.Writer, rows []row, size int) {
	find := func(id string) *row {
		for i := range rows {
			if rows[i].System == id && rows[i].RecordBytes == size {
				return &rows[i]
			}
		}
		return nil
	}
	ratioLabelWidth := 0
	for _, c := range comparisons {
		ratioLabelWidth = max(ratioLabelWidth, len(c.subject+" / "+c.baseline))
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	printed := false
	for _, c := range comparisons {
		subject, baseline := find(c.subject), find(c.baseline)
		if subject == nil || baseline == nil {
			continue
		}
		if !printed {
			fmt.Fprintf(w, "ratios at %d bytes (subject / baseline: throughput higher is better, latency lower is better)\n", size)
			fmt.Fprintf(tw, "%-*s\tproduce\tconsume\tack p99\te2e p99\t\n", ratioLabelWidth, "subject / baseline")
			printed = true
		}
		fmt.Fprintf(tw, "%-*s\t%s\t%s\t%s\t%s\t\n", ratioLabelWidth, c.subject+" / "+c.baseline,
			ratio(subject.ProduceRecordsPerSecond, baseline.ProduceRecordsPerSecond, subject.ProduceRuns, baseline.ProduceRuns),
			ratio(subject.ConsumeRecordsPerSecond, baseline.ConsumeRecordsPerSecond, subject.ConsumeRuns, baseline.ConsumeRuns),
			ratio(float64(subject.AckP99), float64(baseline.AckP99), subject.LatencyRuns, baseline.LatencyRuns),
			ratio(float64(subject.EndToEndP99), float64(baseline.EndToEndP99), subject.LatencyRuns, baseline.LatencyRuns))
	}
	tw.Flush()
}

// A figure no run measured prints as "-".

func rate(x float64, runs int) string {
	if runs == 0 {
		return "-"
	}
	return humanCount(x)
}

func megabytes(x float64, runs int) string {
	if runs == 0 {
		return "-"
	}
	return fmt.Sprintf("%.1f", x)
}

func latency(d time.Duration, runs int) string {
	if runs == 0 {
		return "-"
	}
	return bench.FormatDuration(d)
}

func ratio(subject, baseline float64, subjectRuns, baselineRuns int) string {
	if subjectRuns == 0 || baselineRuns == 0 || baseline == 0 {
		return "-"
	}
	return fmt.Sprintf("%.2fx", subject/baseline)
}

// humanCount prints 1234 as 1,234 and 1234567 as 1.23M.
func humanCount(x float64) string {
	switch {
	case x >= 1e6:
		return fmt.Sprintf("%.2fM", x/1e6)
	case x >= 1e4:
		return fmt.Sprintf("%.1fk", x/1e3)
	default:
		return fmt.Sprintf("%.0f", x)
	}
}

// errorLineMax bounds an error note in the table.
const errorLineMax = 300

func shorten(s string) string {
	if len(s) <= errorLineMax {
		return s
	}
	return s[:errorLineMax] + "..."
}
