package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"sluice/jepsen/bench"
)

func main() {
	if len(os.Args) > 1 {
		switch os.Args[1] {
		case "serve-kfake":
			os.Exit(serveKfake(os.Args[2:]))
		case "serve-nats":
			os.Exit(serveNATS(os.Args[2:]))
		case "serve-raw":
			os.Exit(serveRaw(os.Args[2:]))
		}
	}
	os.Exit(run(os.Args[1:]))
}

// harness is one invocation: what to run and where.
type harness struct {
	settings settings
	phases   phases
	workDir  string
	build    sluiceBuild
}

// Bounds of the flags.
const (
	runsMax        = 99
	recordSizesMax = 8
)

func run(args []string) int {
	flags := flag.NewFlagSet("bench-peers", flag.ContinueOnError)
	flags.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: bench-peers [flags]   (make bench-peers BENCH_PEERS_FLAGS='--quick')\n\nsystems: "+systemIDs())
		flags.PrintDefaults()
	}
	runs := flags.Int("runs", 3, "runs of every system; the table shows each figure's median")
	quick := flags.Bool("quick", false, "smoke test: one run, short phases")
	sizes := flags.String("record-bytes", "100,1024", "record sizes, comma-separated")
	only := flags.String("systems", "", "comma-separated system ids to run (default: all)")
	warmUp := flags.Duration("warmup", time.Second, "unmeasured warm-up of each produce phase")
	duration := flags.Duration("duration", 2*time.Second, "measured window of each produce phase")
	consumeMax := flags.Duration("consume-max", 2*time.Second, "longest consume phase, from the first record")
	settleMax := flags.Duration("settle-max", 20*time.Second, "longest a phase may run past its window (last acknowledgements, consumer catching up)")
	latencyRate := flags.Float64("latency-rate", 10_000, "fixed rate of the latency phase, records/s")
	partitions := flags.Int("partitions", 1, "partitions per topic (NATS: streams)")
	producers := flags.Int("producers", 1, "producing clients")
	pendingMax := flags.Int("max-pending", bench.PendingMaxDefault, "unacknowledged records per producing client")
	sluiceBinary := flags.String("sluice-binary", "", "a prebuilt sluice binary (default: go build the main module)")
	output := flags.String("out", "", "also write every measurement and the medians as JSON to this file")
	keep := flags.Bool("keep", false, "keep the data directories and logs")
	if err := flags.Parse(args); err != nil {
		return 2
	}
	if *quick {
		*runs = 1
		*warmUp, *duration, *consumeMax, *settleMax = 300*time.Millisecond, 700*time.Millisecond, time.Second, 5*time.Second
	}
	recordSizes, err := parseSizes(*sizes)
	selected := selectSystems(systems(), *only)
	switch {
	case err != nil:
		fmt.Fprintln(os.Stderr, "bench-peers:", err)
		return 2
	case *runs < 1 || *runs > runsMax:
		fmt.Fprintf(os.Stderr, "bench-peers: --runs %d: want 1 to %d\n", *runs, runsMax)
		return 2
	case len(selected) == 0:
		fmt.Fprintf(os.Stderr, "bench-peers: --systems %q names none of: %s\n", *only, systemIDs())
		return 2
	case *partitions < 1 || *partitions > 1000 || *producers < 1 || *producers > bench.ProducersMax || *pendingMax < 1 || *pendingMax > bench.PendingMax:
		fmt.Fprintln(os.Stderr, "bench-peers: --partitions, --producers or --max-pending out of range")
		return 2
	}
	for _, size := range recordSizes {
		load := bench.Load{RecordBytes: size, Rate: *latencyRate, WarmUp: *warmUp, Duration: *duration}
		if err := load.Validate(); err != nil {
			fmt.Fprintln(os.Stderr, "bench-peers:", err)
			return 2
		}
	}

	workDir, err := os.MkdirTemp("", "bench-peers-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench-peers:", err)
		return 1
	}
	if !*keep {
		defer os.RemoveAll(workDir)
	}
	h := &harness{
		settings: settings{partitions: *partitions, producers: *producers, pendingMax: *pendingMax},
		phases:   phases{warmUp: *warmUp, duration: *duration, consumeMax: *consumeMax, latencyRate: *latencyRate, settleMax: *settleMax},
		workDir:  workDir,
		build:    sluiceBuild{prebuilt: *sluiceBinary},
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()

	perCell := 2*(*warmUp+*duration) + *consumeMax + time.Second
	estimate := time.Duration(*runs*len(selected)) * (time.Duration(len(recordSizes))*perCell + 2*time.Second)
	fmt.Fprintf(os.Stderr, "bench-peers: %d systems × %d sizes × %d runs, at least %v (a slow or failing system adds its settle time); work directory %s\n",
		len(selected), len(recordSizes), *runs, estimate.Round(time.Second), workDir)
	started := time.Now()

	var cells []cell
	for runIndex := 1; runIndex <= *runs && ctx.Err() == nil; runIndex++ {
		// Every run goes through every system, so drift in the machine's
		// state (other load, page cache, thermal) spreads over all rows.
		for _, s := range selected {
			if ctx.Err() != nil {
				break
			}
			cells = append(cells, h.runSystem(ctx, s, runIndex, *runs, recordSizes)...)
		}
	}
	if ctx.Err() != nil {
		fmt.Fprintln(os.Stderr, "bench-peers: interrupted; the table covers what finished")
	}
	fmt.Fprintf(os.Stderr, "bench-peers: measured in %v\n", time.Since(started).Round(time.Second))
	table := summarize(selected, recordSizes, cells)
	printTables(os.Stdout, h, table, recordSizes, *runs)
	if *output != "" {
		if err := writeJSON(*output, h, cells, table); err != nil {
			fmt.Fprintln(os.Stderr, "bench-peers:", err)
			return 1
		}
		fmt.Fprintf(os.Stderr, "bench-peers: wrote %s\n", *output)
	}
	if *keep {
		fmt.Fprintf(os.Stderr, "bench-peers: kept %s\n", workDir)
	}
	return 0
}

// runSystem starts one system in a fresh directory, measures every record
// size on it, and stops it.
func (h *harness) runSystem(ctx context.Context, s system, runIndex, runs int, sizes []int) []cell {
	dir := filepath.Join(h.workDir, fmt.Sprintf("run-%d", runIndex), s.id)
	cells := make([]cell, len(sizes))
	for i, size := range sizes {
		cells[i] = cell{System: s.id, RecordBytes: size, Run: runIndex}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		for i := range cells {
			cells[i].fail("start", err)
		}
		return cells
	}
	t, err := s.start(ctx, h, dir)
	if err != nil {
		for i := range cells {
			cells[i].fail("start", err)
			fmt.Fprintf(os.Stderr, "[run %d/%d] %-16s %5d B  %s\n", runIndex, runs, s.id, cells[i].RecordBytes, strings.Join(cells[i].Errors, "; "))
		}
		return cells
	}
	for i := range cells {
		h.measure(ctx, t, &cells[i])
		fmt.Fprintf(os.Stderr, "[run %d/%d] %-16s %5d B  %s\n", runIndex, runs, s.id, cells[i].RecordBytes, progressLine(&cells[i]))
		if cells[i].Produce == nil || cells[i].Produce.Acknowledged == 0 {
			// A system that acknowledged nothing will not at the next
			// size either; its time is better spent on the others.
			for j := i + 1; j < len(cells); j++ {
				cells[j].fail("skipped", fmt.Sprintf("the %d-byte measurement got no acknowledgement", cells[i].RecordBytes))
			}
			break
		}
	}
	t.stop()
	return cells
}

func progressLine(c *cell) string {
	var parts []string
	if c.Produce != nil {
		parts = append(parts, fmt.Sprintf("produce %s/s", humanCount(c.Produce.RecordsPerSecond)))
	}
	if c.Consume != nil {
		parts = append(parts, fmt.Sprintf("consume %s/s", humanCount(c.Consume.RecordsPerSecond)))
	}
	if c.Latency != nil {
		parts = append(parts, fmt.Sprintf("ack p99 %s, e2e p99 %s", bench.FormatDuration(c.Latency.Produce.Latency.P99), bench.FormatDuration(c.Latency.Latency.P99)))
	}
	parts = append(parts, c.Errors...)
	return strings.Join(parts, "; ")
}

func parseSizes(list string) ([]int, error) {
	var sizes []int
	for _, field := range strings.Split(list, ",") {
		size, err := strconv.Atoi(strings.TrimSpace(field))
		if err != nil {
			return nil, fmt.Errorf("--record-bytes %q: %v", list, err)
		}
		sizes = append(sizes, size)
	}
	if len(sizes) > recordSizesMax {
		return nil, fmt.Errorf("--record-bytes: at most %d sizes", recordSizesMax)
	}
	return sizes, nil
}

func systemIDs() string {
	var ids []string
	for _, s := range systems() {
		ids = append(ids, s.id)
	}
	return strings.Join(ids, ", ")
}

func writeJSON(path string, h *harness, cells []cell, table []row) error {
	document := map[string]any{
		"settings": map[string]any{
			"partitions":   h.settings.partitions,
			"producers":    h.settings.producers,
			"max_pending":  h.settings.pendingMax,
			"warm_up":      h.phases.warmUp.String(),
			"duration":     h.phases.duration.String(),
			"consume_max":  h.phases.consumeMax.String(),
			"latency_rate": h.phases.latencyRate,
		},
		"medians":      table,
		"measurements": cells,
	}
	data, err := json.MarshalIndent(document, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(data, '\n'), 0o644)
}
