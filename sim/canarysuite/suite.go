package canarysuite

import (
	"runtime"
	"slices"
	"sync"
	"time"

	"sluice/sim"
	"sluice/sim/catalog"
)

// startsDefault are where the default measurement starts counting seeds:
// seed 1, where each bound was first measured, and four points far from
// it and from each other, so a bound is not an accident of seeds 1-N.
var startsDefault = []uint64{1, 1_000_001, 2_000_001, 3_000_001, 4_000_001}

// DefaultStarts returns the default starting points.
func DefaultStarts() []uint64 { return slices.Clone(startsDefault) }

// Options configure a measurement.
type Options struct {
	// Canaries are the planted bugs to measure; every one in the catalog
	// when empty.
	Canaries []sim.Canary
	// Starts are the first seeds of each count; DefaultStarts when empty.
	Starts []uint64
	// Workers run counts in parallel (one per CPU when zero); each seed
	// stays single-threaded.
	Workers int
}

// Measurement is one canary's count from every starting point.
type Measurement struct {
	Canary sim.Canary
	// Counts are in the order of Options.Starts.
	Counts []Count
}

// Count is the seeds one starting point took to catch a canary.
type Count struct {
	Start uint64
	// Seeds is how many consecutive seeds ran, the catching one
	// included; SeedsMax when the canary escaped.
	Seeds int
	// Caught is false when every one of SeedsMax seeds passed.
	Caught bool
	// Seed is the catching seed and Check the check it failed.
	Seed  uint64
	Check string
	// Elapsed is the wall time the seeds took, run one after another on
	// one goroutine: what finding the bug costs a sweep's core.
	Elapsed time.Duration
}

// Median is the median count of seeds to the first failure; an escape
// counts as SeedsMax+1.
func (m Measurement) Median() int {
	seeds := m.seeds()
	if len(seeds) == 0 {
		return 0
	}
	return seeds[len(seeds)/2]
}

// Worst is the largest count of seeds to the first failure; above the
// bound (SeedsMax+1) when some starting point never caught it.
func (m Measurement) Worst() int {
	seeds := m.seeds()
	if len(seeds) == 0 {
		return 0
	}
	return seeds[len(seeds)-1]
}

func (m Measurement) seeds() []int {
	seeds := make([]int, 0, len(m.Counts))
	for _, c := range m.Counts {
		if c.Caught {
			seeds = append(seeds, c.Seeds)
		} else {
			seeds = append(seeds, m.Canary.SeedsMax+1)
		}
	}
	slices.Sort(seeds)
	return seeds
}

// MedianElapsed is the median wall time, on one core, to the first failure
// (or to the end of the bound, for a starting point that never caught it).
func (m Measurement) MedianElapsed() time.Duration {
	if len(m.Counts) == 0 {
		return 0
	}
	elapsed := make([]time.Duration, 0, len(m.Counts))
	for _, c := range m.Counts {
		elapsed = append(elapsed, c.Elapsed)
	}
	slices.Sort(elapsed)
	return elapsed[len(elapsed)/2]
}

// Escaped reports whether some starting point ran SeedsMax seeds without
// a failure.
func (m Measurement) Escaped() bool {
	return slices.ContainsFunc(m.Counts, func(c Count) bool { return !c.Caught })
}

// Checks lists the checks that caught the canary, sorted, each once.
func (m Measurement) Checks() []string {
	var checks []string
	for _, c := range m.Counts {
		if c.Caught && !slices.Contains(checks, c.Check) {
			checks = append(checks, c.Check)
		}
	}
	slices.Sort(checks)
	return checks
}

// Measure counts, for every canary and starting point, the seeds until the
// canary's workload first fails with it on, at most SeedsMax.
func Measure(options Options) []Measurement {
	canaries := options.Canaries
	if len(canaries) == 0 {
		canaries = catalog.Canaries()
	}
	starts := options.Starts
	if len(starts) == 0 {
		starts = DefaultStarts()
	}
	workers := options.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	// The suite is a sweep of its own: many seeds, a small live heap.
	defer sim.CollectLikeASweep(workers)()
	measurements := make([]Measurement, len(canaries))
	type job struct{ canary, start int }
	jobs := make(chan job)
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range jobs {
				measurements[j.canary].Counts[j.start] = count(canaries[j.canary], starts[j.start])
			}
		}()
	}
	for i, c := range canaries {
		measurements[i] = Measurement{Canary: c, Counts: make([]Count, len(starts))}
	}
	// The slowest canaries first would finish sooner; the catalog's order
	// keeps the schedule simple and the table stable either way.
	for i := range canaries {
		for j := range starts {
			jobs <- job{i, j}
		}
	}
	close(jobs)
	wg.Wait()
	return measurements
}

// count runs seeds from start until the canary is caught or SeedsMax
// seeds passed.
func count(c sim.Canary, start uint64) Count {
	w, ok := catalog.Workload(c.Workload)
	if !ok {
		panic("canarysuite: canary " + c.Name + " names unknown workload " + c.Workload)
	}
	w = c.CatchingWorkload(w)
	options := sim.RunOptions{Canaries: []string{c.Name}}
	began := time.Now()
	for i := range c.SeedsMax {
		seed := start + uint64(i)
		r := w.Run(seed, options)
		if !r.Passed() {
			return Count{Start: start, Seeds: i + 1, Caught: true, Seed: seed, Check: r.Check, Elapsed: time.Since(began)}
		}
	}
	return Count{Start: start, Seeds: c.SeedsMax, Elapsed: time.Since(began)}
}
