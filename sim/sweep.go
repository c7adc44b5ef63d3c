package sim

import (
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

// SeedRange is an inclusive range of seeds, written "A-B" or "S".
type SeedRange struct{ First, Last uint64 }

// ParseSeedRange reads "1-10000" or "7".
func ParseSeedRange(s string) (SeedRange, error) {
	first, last, isRange := strings.Cut(s, "-")
	a, err := strconv.ParseUint(strings.TrimSpace(first), 10, 64)
	if err != nil {
		return SeedRange{}, fmt.Errorf("seed range %q: %v", s, err)
	}
	if !isRange {
		return SeedRange{a, a}, nil
	}
	b, err := strconv.ParseUint(strings.TrimSpace(last), 10, 64)
	if err != nil {
		return SeedRange{}, fmt.Errorf("seed range %q: %v", s, err)
	}
	if b < a {
		return SeedRange{}, fmt.Errorf("seed range %q: last seed is before the first", s)
	}
	return SeedRange{a, b}, nil
}

// Count is the number of seeds in the range.
func (r SeedRange) Count() uint64 { return r.Last - r.First + 1 }

// SweepOptions configure a sweep.
type SweepOptions struct {
	Run       RunOptions
	Workers   int  // goroutines running seeds; each seed stays single-threaded
	KeepGoing bool // run every seed even after a failure
	// TimeBox, when positive, stops handing out seeds once the sweep has
	// run this long (the first seed always runs); the seeds out finish. Seeds are handed out in order,
	// so the seeds run are always a prefix of the range (LastSeed says
	// where it ends), and a rerun on a faster machine runs a longer one.
	TimeBox time.Duration
	// Stop, when closed, stops handing out seeds as the time box does (the
	// command line closes it on Ctrl-C): the seeds out finish, and the
	// summary covers the prefix of the range that ran.
	Stop <-chan struct{}

	// Progress, when set, receives a progress line about once a second,
	// redrawn in place (carriage return) for a terminal.
	Progress io.Writer
	// ProgressLines writes the progress as lines instead, one every
	// progressLinesEvery, for a log that is not a terminal (CI), where a
	// redrawn line would pile up into one line of a whole sweep.
	ProgressLines bool
	// Failures receives each failing seed's result line as it is found.
	Failures io.Writer
}

// SweepSummary is what a sweep found.
type SweepSummary struct {
	Seeds, Passed, Failed uint64
	Elapsed               time.Duration
	SimTime               time.Duration
	// Workers is how many seeds ran at once, and Cores how many CPUs they
	// had (GOMAXPROCS): the per-core rate divides by the fewer of the two.
	Workers, Cores int
	// TimeBoxed is set when the time box stopped the sweep before the
	// end of its range, Stopped when Stop did; LastSeed is then the last
	// seed handed out.
	TimeBoxed, Stopped bool
	LastSeed           uint64
	// FirstFailure is the failing result with the lowest seed, if any.
	FirstFailure *Result
	// FailuresByCheck counts failures per violated check, by check name.
	FailuresByCheck map[string]uint64
	// Coverage sums the runs' coverage; nil when no run counted any.
	Coverage *Coverage
}

// SeedsPerSecond is the sweep's throughput.
func (s SweepSummary) SeedsPerSecond() float64 {
	if s.Elapsed <= 0 {
		return 0
	}
	return float64(s.Seeds) / s.Elapsed.Seconds()
}

// CoresUsed is how many CPUs the sweep kept busy: its workers, at most
// one per core.
func (s SweepSummary) CoresUsed() int {
	return max(1, min(s.Workers, s.Cores))
}

// Line is the summary line printed at the end of a sweep. The per-core
// rate and speed-up are what one CPU does; seeds_per_s and sim_speedup are
// the whole machine's.
func (s SweepSummary) Line() string {
	speedup := 0.0
	if s.Elapsed > 0 {
		speedup = s.SimTime.Seconds() / s.Elapsed.Seconds()
	}
	cores := float64(s.CoresUsed())
	line := fmt.Sprintf("seeds=%d passed=%d failed=%d seeds_per_s=%.1f sim_speedup=%.0fx cores=%d seeds_per_s_per_core=%.1f sim_speedup_per_core=%.0fx",
		s.Seeds, s.Passed, s.Failed, s.SeedsPerSecond(), speedup, s.CoresUsed(), s.SeedsPerSecond()/cores, speedup/cores)
	switch {
	case s.TimeBoxed:
		line += fmt.Sprintf(" time_boxed=seeds-up-to-%d", s.LastSeed)
	case s.Stopped:
		line += fmt.Sprintf(" stopped=seeds-up-to-%d", s.LastSeed)
	}
	checks := make([]string, 0, len(s.FailuresByCheck))
	for check := range s.FailuresByCheck {
		checks = append(checks, check)
	}
	sort.Strings(checks)
	for _, check := range checks {
		line += fmt.Sprintf(" failed[%s]=%d", check, s.FailuresByCheck[check])
	}
	return line
}

// Sweep runs a workload over a range of seeds on several goroutines. Each
// seed runs alone on one goroutine, so every run stays deterministic; only
// the order in which seeds finish varies. Unless KeepGoing is set it stops
// handing out seeds after the first failure, and reports the lowest failing
// seed it saw.
func Sweep(w Workload, seeds SeedRange, options SweepOptions) SweepSummary {
	workers := options.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	defer CollectLikeASweep(workers)()
	start := time.Now()
	var (
		mu      sync.Mutex
		next    = seeds.First
		done    bool
		summary = SweepSummary{FailuresByCheck: map[string]uint64{}}
	)
	summary.Workers, summary.Cores = workers, runtime.GOMAXPROCS(0)
	take := func() (uint64, bool) {
		mu.Lock()
		defer mu.Unlock()
		if done || next > seeds.Last || next < seeds.First {
			return 0, false
		}
		if options.TimeBox > 0 && next > seeds.First && time.Since(start) >= options.TimeBox {
			done, summary.TimeBoxed = true, true
			return 0, false
		}
		select {
		case <-options.Stop:
			if next > seeds.First {
				done, summary.Stopped = true, true
				return 0, false
			}
		default:
		}
		seed := next
		summary.LastSeed = seed
		if next == seeds.Last {
			done = true
		} else {
			next++
		}
		return seed, true
	}
	record := func(r Result) {
		mu.Lock()
		defer mu.Unlock()
		summary.Seeds++
		summary.SimTime += r.SimTime
		if r.Coverage != nil {
			if summary.Coverage == nil {
				summary.Coverage = NewCoverage(nil, nil)
			}
			summary.Coverage.Add(r.Coverage)
		}
		if r.Passed() {
			summary.Passed++
			return
		}
		summary.Failed++
		summary.FailuresByCheck[r.Check]++
		if summary.FirstFailure == nil || r.Seed < summary.FirstFailure.Seed {
			failure := r
			summary.FirstFailure = &failure
		}
		if options.Failures != nil {
			if options.Progress != nil {
				// End the progress line, redrawn in place with a
				// carriage return, so that the failure starts a line
				// of its own on a terminal and in a log alike.
				fmt.Fprintln(options.Progress)
			}
			fmt.Fprintln(options.Failures, r.Line())
		}
		if !options.KeepGoing {
			done = true
		}
	}

	stopProgress := make(chan struct{})
	progressDone := make(chan struct{})
	go func() {
		defer close(progressDone)
		if options.Progress == nil {
			return
		}
		every := time.Second
		if options.ProgressLines {
			every = progressLinesEvery
		}
		ticker := time.NewTicker(every)
		defer ticker.Stop()
		for {
			select {
			case <-stopProgress:
				return
			case <-ticker.C:
				mu.Lock()
				finished, failed := summary.Seeds, summary.Failed
				mu.Unlock()
				fmt.Fprint(options.Progress, progressReport(options.ProgressLines, finished, failed, seeds.Count(), time.Since(start)))
			}
		}
	}()

	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				seed, ok := take()
				if !ok {
					return
				}
				record(w.Run(seed, options.Run))
			}
		}()
	}
	wg.Wait()
	close(stopProgress)
	<-progressDone
	if options.Progress != nil {
		final := progressReport(options.ProgressLines, summary.Seeds, summary.Failed, seeds.Count(), time.Since(start))
		if !options.ProgressLines {
			final += "\n" // leave the terminal's last bar standing
		}
		fmt.Fprint(options.Progress, final)
	}
	summary.Elapsed = time.Since(start)
	return summary
}

// CollectLikeASweep sets the garbage collector up for a sweep of workers
// goroutines and returns the function that puts the old settings back.
//
// A run keeps only a few megabytes live but allocates about ten per seed,
// so with Go's default GOGC=100 the collector runs every couple of
// megabytes and its fixed cost per cycle takes about half the CPU of a
// sweep. A sweep is a batch job with a small live heap, so it collects by
// size alone: GOGC off, and a memory limit of sweepHeapPerWorker per
// worker, at which the collector runs. Measured on the cluster workload
// (seeds 1-500, two workers, seven alternated runs, median CPU): 7.81 s
// against 8.66 s with GOGC=800 (the setting before), 8.16 s with 1600
// and 8.51 s with 3200; a limit of 1.2 GB or more was slower again (the
// heap outgrows the caches). A seed whose live heap neared the limit would
// make the collector run often, never fail: the runtime caps the CPU a
// collection near the limit may take. A lower limit already set (the
// GOMEMLIMIT environment variable) is kept.
func CollectLikeASweep(workers int) (restore func()) {
	limit := int64(max(workers, 1)) * sweepHeapPerWorker
	oldLimit := debug.SetMemoryLimit(-1)
	if oldLimit < limit {
		limit = oldLimit
	}
	debug.SetMemoryLimit(limit)
	oldPercent := debug.SetGCPercent(-1)
	return func() {
		debug.SetGCPercent(oldPercent)
		debug.SetMemoryLimit(oldLimit)
	}
}

// sweepHeapPerWorker is the heap a sweep lets each worker grow before a
// collection (see CollectLikeASweep).
const sweepHeapPerWorker = 150 << 20

// progressLinesEvery is how often a sweep writes a progress line to a log
// that is not a terminal: often enough to show a CI job alive, rarely
// enough that a ten-minute sweep is sixty lines.
const progressLinesEvery = 10 * time.Second

// progressReport is one progress report: a line of its own, or for a
// terminal the line redrawn in place (a trailing space covers what a
// longer line before it left).
func progressReport(lines bool, finished, failed, total uint64, elapsed time.Duration) string {
	if lines {
		return progressLine(finished, failed, total, elapsed) + "\n"
	}
	return "\r" + progressLine(finished, failed, total, elapsed) + " "
}

// progressLine draws "[#####.....] 5000/10000 seeds 1234.5/s failed=0 left 4s".
func progressLine(finished, failed, total uint64, elapsed time.Duration) string {
	const width = 30
	filled := 0
	if total > 0 {
		filled = int(finished * width / total)
	}
	rate := float64(finished) / elapsed.Seconds()
	left := "?"
	if rate > 0 {
		left = time.Duration(float64(total-finished) / rate * float64(time.Second)).Round(time.Second).String()
	}
	return fmt.Sprintf("[%s%s] %d/%d seeds %.1f/s failed=%d left %s",
		strings.Repeat("#", filled), strings.Repeat(".", width-filled), finished, total, rate, failed, left)
}
