package main

import (
	"cmp"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"

	"sluice/jepsen/checker"
	"sluice/sim"
	"sluice/sim/brokerworkload"
	"sluice/sim/canarysuite"
	"sluice/sim/catalog"
	"sluice/sim/clusterworkload"
	"sluice/sim/report"
	"sluice/sim/scenario"
	"sluice/sim/shrink"
)

func init() {
	register("sim", "run the deterministic simulator: one seed, or a sweep of seeds", runSim)
}

// simWorkersMax bounds --workers: each worker holds a whole simulated
// cluster in memory, and more workers than CPUs only share them.
const simWorkersMax = 1024

func runSim(args []string) int {
	flags := flag.NewFlagSet("sim", flag.ContinueOnError)
	workloadName := flags.String("workload", catalog.DefaultWorkload, "workload to run: "+strings.Join(catalog.WorkloadNames(), ", "))
	seed := flags.Uint64("seed", 0, "run this one seed and print its result line")
	seeds := flags.String("seeds", "", "sweep a seed range A-B (inclusive)")
	workers := flags.Int("workers", 0, "seeds run in parallel during a sweep (default: one per CPU)")
	keepGoing := flags.Bool("keep-going", false, "keep sweeping after a failure")
	timeBox := flags.Duration("time-box", 0, "stop a sweep starting seeds after this long (e.g. 3m); the seeds run are a prefix of the range")
	canaries := flags.String("canary", "", "comma-separated planted bugs to switch on (see --list-canaries)")
	listCanaries := flags.Bool("list-canaries", false, "list the planted bugs and the workload that catches each")
	profile := flags.String("profile", "", "cluster workload: lean every seed's draw the way this canary's runs lean, without planting it ("+strings.Join(clusterworkload.Profiles(), ", ")+")")
	trace := flags.Bool("trace", false, "print the event trace of a single seed")
	scenarioFile := flags.String("scenario", "", "run a scenario file (scenarios/*.txt); --seed replaces the file's seed")
	reportFile := flags.String("report", "", "write a self-contained HTML report of the single run (--seed or --scenario) to this file")
	historyFile := flags.String("history", "", "write the client history of the single run, as its checks judged it, to this file as JSON lines (cluster and broker workloads)")
	logLevel := flags.String("log-level", "", "with --trace: put core's log lines down to this level in the trace (debug, info, warn, error); changes the trace hash")
	shrinkRun := flags.Bool("shrink", false, "reduce the failing single run (--seed, or --scenario) while it fails the same check, and write it as a regression file")
	shrinkOut := flags.String("out", "", "where --shrink writes (default scenarios/regressions/<workload>-<check>-<seed>.txt)")
	determinism := flags.Bool("determinism", false, "run every seed twice and fail one whose two runs differ; for one run (--seed, --scenario), print the trace lines where they part")
	canarySuite := flags.Bool("canaries", false, "measure every planted bug: seeds to first failure from 5 starting points, against its bound")
	searchSteps := flags.Int("search-steps", 0, fmt.Sprintf("cluster and broker workloads: the budget of each linearizability search of the checker, in steps (default %d); more decides a run whose search ran out (check inconclusive)", checker.SearchStepsDefault))
	if err := flags.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0 // asked for: the usage is the answer
		}
		return 2
	}
	if flags.NArg() > 0 {
		fmt.Fprintf(os.Stderr, "sluice sim: unexpected argument %q (flags are --name value)\n", flags.Arg(0))
		return 2
	}
	given := map[string]bool{}
	flags.Visit(func(f *flag.Flag) { given[f.Name] = true })
	if f := simFlagConflict(given); f != "" {
		fmt.Fprintln(os.Stderr, "sluice sim:", f)
		return 2
	}
	if *timeBox < 0 {
		fmt.Fprintf(os.Stderr, "sluice sim: --time-box %v: want a positive duration (0: none)\n", *timeBox)
		return 2
	}
	if *workers < 0 || *workers > simWorkersMax {
		fmt.Fprintf(os.Stderr, "sluice sim: --workers %d: want 1 to %d (0: one per CPU)\n", *workers, simWorkersMax)
		return 2
	}
	if *determinism && (*listCanaries || *canarySuite) {
		fmt.Fprintln(os.Stderr, "sluice sim: --determinism runs seeds twice; --list-canaries runs none, and --canaries already runs each canary as it must be run to be caught")
		return 2
	}
	if *listCanaries {
		w := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', 0)
		for _, c := range catalog.Canaries() {
			fmt.Fprintf(w, "%s\t%s\t%s\n", c.Name, c.Workload, c.Description)
		}
		w.Flush()
		return 0
	}
	if *canarySuite {
		return runCanarySuite(*workers)
	}
	workload, ok := catalog.Workload(*workloadName)
	if !ok {
		fmt.Fprintf(os.Stderr, "sluice sim: unknown workload %q (have: %s)\n", *workloadName, strings.Join(catalog.WorkloadNames(), ", "))
		return 2
	}
	if *historyFile != "" && *scenarioFile == "" && workload.Name() != clusterworkload.Name && workload.Name() != brokerworkload.Name {
		fmt.Fprintf(os.Stderr, "sluice sim: --history: the %s workload has no client history (the cluster and broker workloads do)\n", workload.Name())
		return 2
	}
	options := sim.RunOptions{}
	level, err := parseLogLevel(*logLevel)
	if err != nil {
		fmt.Fprintln(os.Stderr, "sluice sim:", err)
		return 2
	}
	options.LogLevel = level
	if *searchSteps != 0 {
		switch {
		case *searchSteps < 0:
			fmt.Fprintf(os.Stderr, "sluice sim: --search-steps %d: want a positive number of steps\n", *searchSteps)
			return 2
		case *scenarioFile == "" && workload.Name() != clusterworkload.Name && workload.Name() != brokerworkload.Name:
			fmt.Fprintf(os.Stderr, "sluice sim: --search-steps: the %s workload's checks search no linearizations (the cluster and broker workloads' do)\n", workload.Name())
			return 2
		}
		options.SearchSteps = *searchSteps
	}
	if *canaries != "" {
		for _, name := range strings.Split(*canaries, ",") {
			c, known := catalog.Canary(name)
			if !known {
				fmt.Fprintf(os.Stderr, "sluice sim: unknown canary %q (see --list-canaries)\n", name)
				return 2
			}
			if *scenarioFile == "" {
				if caught := canaryWorkloads(name); !canaryReachable(workload.Name(), caught) {
					fmt.Fprintf(os.Stderr, "sluice sim: canary %s is planted in code the %s workload does not run; give --workload %s\n",
						name, workload.Name(), strings.Join(caught, " or "))
					return 2
				}
			}
			if c.Twice && !*determinism {
				fmt.Fprintf(os.Stderr, "sluice sim: note: %s changes only the order of events, so every check of one run passes; add --determinism to run each seed twice and catch it\n", name)
			}
			options.Canaries = append(options.Canaries, name)
		}
	}
	if *profile != "" {
		switch {
		case workload.Name() != clusterworkload.Name:
			fmt.Fprintf(os.Stderr, "sluice sim: --profile leans the cluster workload's draw; the %s workload has no profiles\n", workload.Name())
			return 2
		case *canaries != "":
			fmt.Fprintln(os.Stderr, "sluice sim: give --profile or --canary, not both: a canary's runs lean their own way")
			return 2
		case *scenarioFile != "":
			fmt.Fprintln(os.Stderr, "sluice sim: --profile leans drawn seeds; a scenario file is given in full")
			return 2
		case !slices.Contains(clusterworkload.Profiles(), *profile):
			fmt.Fprintf(os.Stderr, "sluice sim: unknown profile %q (have: %s)\n", *profile, strings.Join(clusterworkload.Profiles(), ", "))
			return 2
		}
		options.Profile = *profile
	}
	replayWith := func(s uint64, steps int) string {
		line := fmt.Sprintf("%s --workload %s --seed %d", simCommand(), workload.Name(), s)
		if *canaries != "" {
			line += " --canary " + *canaries
		}
		if *profile != "" {
			line += " --profile " + *profile
		}
		if steps != 0 {
			line += fmt.Sprintf(" --search-steps %d", steps)
		}
		return line
	}
	replay := func(s uint64) string {
		line := replayWith(s, *searchSteps)
		if *determinism {
			line += " --determinism"
		}
		return line
	}
	// nextSteps says how to look into a failing seed.
	nextSteps := func(check string, s uint64) {
		if check == sim.CheckNondeterministic {
			printBuiltFrom(os.Stdout)
			fmt.Printf("look into it: %s --log-level debug   (the trace lines where the two runs part, with core's debug lines)\n", replay(s))
			return
		}
		more := ""
		if check == checker.CheckInconclusive {
			steps := cmp.Or(*searchSteps, checker.SearchStepsDefault)
			more = replayWith(s, searchStepsMore*steps)
		}
		printNextSteps(os.Stdout, workload.Name(), s, replay(s), more)
	}
	if *determinism {
		switch {
		case *trace, *reportFile != "", *historyFile != "":
			fmt.Fprintln(os.Stderr, "sluice sim: --determinism runs each seed twice and prints where the runs part; --trace, --report and --history describe one run, so give them without it")
			return 2
		case *shrinkRun:
			fmt.Fprintln(os.Stderr, "sluice sim: --shrink keeps a failing check; give --determinism without it (a nondeterministic seed is found, not shrunk)")
			return 2
		}
	}

	if *shrinkRun {
		if *seeds != "" {
			fmt.Fprintln(os.Stderr, "sluice sim: --shrink works on one run; give --seed or --scenario")
			return 2
		}
		return runShrink(workload.Name(), *seed, *scenarioFile, options, *shrinkOut)
	}
	if *scenarioFile != "" {
		if *seeds != "" {
			fmt.Fprintln(os.Stderr, "sluice sim: --scenario runs one seed; give --seed, not --seeds")
			return 2
		}
		if *trace {
			options.Trace = os.Stdout
		}
		options.Record = *reportFile != "" || *historyFile != ""
		wantWorkload := ""
		if given["workload"] {
			wantWorkload = workload.Name()
		}
		return runScenarioFile(*scenarioFile, wantWorkload, *seed, options, *reportFile, *historyFile, *determinism)
	}

	switch {
	case *seeds == "" && *determinism:
		result, ok := runTwice(func(o sim.RunOptions) sim.Result { return workload.Run(*seed, o) }, options)
		if !ok {
			nextSteps(sim.CheckNondeterministic, *seed)
			return 1
		}
		if !result.Passed() {
			nextSteps(result.Check, *seed)
			return 1
		}
		return 0
	case *seeds == "":
		if *trace {
			options.Trace = os.Stdout
		}
		options.Record = *reportFile != "" || *historyFile != ""
		result := workload.Run(*seed, options)
		fmt.Println(result.Line())
		if *reportFile != "" {
			if err := writeReport(*reportFile, report.Run{Workload: workload.Name(), Canaries: options.Canaries, Replay: replay(*seed)}, result); err != nil {
				fmt.Fprintln(os.Stderr, "sluice sim:", err)
				return 2
			}
		}
		if *historyFile != "" {
			if err := writeHistory(*historyFile, result); err != nil {
				fmt.Fprintln(os.Stderr, "sluice sim:", err)
				return 2
			}
		}
		if !result.Passed() {
			if *reportFile == "" && !*trace {
				nextSteps(result.Check, *seed)
			}
			return 1
		}
		return 0
	}

	if *reportFile != "" || *historyFile != "" {
		fmt.Fprintln(os.Stderr, "sluice sim: --report and --history describe one run; give --seed (a sweep prints the replay command of its first failure)")
		return 2
	}
	r, err := sim.ParseSeedRange(*seeds)
	if err != nil {
		fmt.Fprintln(os.Stderr, "sluice sim:", err)
		return 2
	}
	if *determinism {
		workload = sim.Twice(workload)
	}
	stop := stopOnInterrupt()
	summary := sim.Sweep(workload, r, sim.SweepOptions{
		Run:       options,
		Workers:   *workers,
		KeepGoing: *keepGoing,
		TimeBox:   *timeBox,
		Stop:      stop,
		Progress:  os.Stderr,
		// A log (CI) gets lines; a terminal, a bar redrawn in place.
		ProgressLines: !isTerminal(os.Stderr),
		Failures:      os.Stdout,
	})
	if f := summary.FirstFailure; f != nil {
		fmt.Printf("first failure: seed %d failed check %s\nreplay: %s\n", f.Seed, f.Check, replay(f.Seed))
		nextSteps(f.Check, f.Seed)
	}
	fmt.Println(summary.Line())
	if summary.Coverage != nil {
		fmt.Println(summary.Coverage.Line())
	}
	switch {
	case summary.Failed > 0:
		return 1
	case summary.Stopped:
		fmt.Fprintf(os.Stderr, "sluice sim: interrupted; seeds %d-%d ran, the rest of the range did not\n", r.First, summary.LastSeed)
		return exitInterrupted
	}
	return 0
}

// printNextSteps says how to look into a failing seed: the report to open,
// the trace and history to grep, and, where the workload has scenarios, the
// shrink that turns it into a regression file; for a run whose
// linearizability search ran out (check inconclusive), more, the replay
// with searchStepsMore times the steps, which may decide it.
func printNextSteps(w io.Writer, workloadName string, seed uint64, replay, more string) {
	printBuiltFrom(w)
	fmt.Fprintf(w, "look into it: %s --report seed-%d.html   (a page to open: the verdict, a timeline, the operations)\n", replay, seed)
	fmt.Fprintf(w, "              %s --trace --log-level debug   (every event, with core's debug lines)\n", replay)
	if workloadName == clusterworkload.Name {
		fmt.Fprintf(w, "              %s --shrink   (a smaller case, written to scenarios/regressions/)\n", replay)
	}
	if more != "" {
		fmt.Fprintf(w, "              %s   (the checker's search ran out: %d times the steps may decide it)\n", more, searchStepsMore)
	}
}

// printBuiltFrom names the revision a failing seed ran on: a seed replays
// the same run only on the same code.
func printBuiltFrom(w io.Writer) {
	fmt.Fprintf(w, "built from:   revision %s (a seed replays the same run only on the same code)\n", thisBuild().revisionText())
}

// searchStepsMore is how many times its steps the replay of an
// inconclusive run suggests: each search's memory bound grows with them,
// from the default's 256 MiB to 2 GiB.
const searchStepsMore = 8

// runScenarioFile runs one scenario file and judges it as the replay test
// does: the outcome its expect line names, and its "# require" stats.
// wantWorkload, when the user named one, must be the file's.
func runScenarioFile(path, wantWorkload string, seed uint64, options sim.RunOptions, reportFile, historyFile string, determinism bool) int {
	f, err := catalog.LoadScenarioFile(path, seed)
	if err != nil {
		fmt.Fprintln(os.Stderr, "sluice sim: --scenario:", err)
		return 2
	}
	if wantWorkload != "" && f.Scenario.Workload != wantWorkload {
		fmt.Fprintf(os.Stderr, "sluice sim: --workload %s, but %s is a %s scenario; leave --workload out (a file names its own)\n", wantWorkload, path, f.Scenario.Workload)
		return 2
	}
	var result sim.Result
	if determinism {
		var ok bool
		if result, ok = runTwice(func(o sim.RunOptions) sim.Result { return catalog.RunScenario(f.Scenario, o) }, options); !ok {
			printBuiltFrom(os.Stdout)
			fmt.Printf("look into it: %s --scenario %s --seed %d --determinism --log-level debug   (with core's debug lines)\n", simCommand(), path, result.Seed)
			return 1
		}
	} else {
		result = catalog.RunScenario(f.Scenario, options)
		fmt.Println(result.Line())
	}
	if reportFile != "" {
		command := simCommand() + " --scenario " + path
		if seed != 0 {
			command += fmt.Sprintf(" --seed %d", seed)
		}
		if len(options.Canaries) > 0 {
			command += " --canary " + strings.Join(options.Canaries, ",")
		}
		canaries := append(append([]string{}, options.Canaries...), f.Scenario.Canaries...)
		if err := writeReport(reportFile, report.Run{Workload: f.Scenario.Workload, Canaries: canaries, Replay: command}, result); err != nil {
			fmt.Fprintln(os.Stderr, "sluice sim:", err)
			return 2
		}
	}
	if historyFile != "" {
		if err := writeHistory(historyFile, result); err != nil {
			fmt.Fprintln(os.Stderr, "sluice sim:", err)
			return 2
		}
	}
	if err := f.Judge(result); err != nil {
		fmt.Printf("%s: %v\n", path, err)
		return 1
	}
	fmt.Printf("%s: as expected\n", path)
	return 0
}

// runTwice makes one run twice, prints the first run's result line and
// whether the two agree, and where they part when they do not (ok false).
func runTwice(run func(sim.RunOptions) sim.Result, options sim.RunOptions) (result sim.Result, ok bool) {
	result, divergence := sim.RunTwice(run, options)
	fmt.Println(result.Line())
	if divergence != nil {
		fmt.Printf("determinism: seed %d is not deterministic: two runs differ\n", result.Seed)
		divergence.Write(os.Stdout)
		return result, false
	}
	fmt.Printf("determinism: two runs of seed %d agree: trace %s, %d steps\n", result.Seed, result.TraceHash, result.Steps)
	return result, true
}

// writeReport writes a run's HTML report and says where.
func writeReport(path string, run report.Run, result sim.Result) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := report.Write(f, run, result); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "report: %s\n", path)
	return nil
}

// runCanarySuite measures every planted bug and prints the table; it
// fails when any escapes its bound.
func runCanarySuite(workers int) int {
	starts := canarysuite.DefaultStarts()
	measurements := canarysuite.Measure(canarysuite.Options{Starts: starts, Workers: workers})
	if err := canarysuite.Table(os.Stdout, measurements, len(starts)); err != nil {
		fmt.Fprintln(os.Stderr, "sluice sim:", err)
		return 2
	}
	for _, m := range measurements {
		if m.Escaped() {
			return 1
		}
	}
	return 0
}

// runShrink reduces a failing cluster run and writes the regression file.
func runShrink(workloadName string, seed uint64, scenarioFile string, options sim.RunOptions, out string) int {
	var s scenario.Scenario
	command := ""
	switch {
	case scenarioFile != "":
		f, err := catalog.LoadScenarioFile(scenarioFile, seed)
		if err != nil {
			fmt.Fprintln(os.Stderr, "sluice sim:", err)
			return 2
		}
		s, command = f.Scenario, simCommand()+" --scenario "+scenarioFile
		if seed != 0 {
			command += fmt.Sprintf(" --seed %d", seed)
		}
		workloadName = f.Scenario.Workload
	case workloadName == clusterworkload.Name && options.Profile != "":
		s = clusterworkload.ScenarioLeaningTo(seed, options.Profile)
		command = fmt.Sprintf("%s --seed %d --profile %s", simCommand(), seed, options.Profile)
	case workloadName == clusterworkload.Name:
		s = clusterworkload.ScenarioOf(seed, options.Canaries)
		command = fmt.Sprintf("%s --seed %d", simCommand(), seed)
	}
	if s.Workload != scenario.WorkloadCluster {
		fmt.Fprintf(os.Stderr, "sluice sim: --shrink reworks cluster scenarios; the %s workload has none\n", workloadName)
		return 2
	}
	if len(options.Canaries) > 0 {
		command += " --canary " + strings.Join(options.Canaries, ",")
	}
	if options.SearchSteps != 0 {
		command += fmt.Sprintf(" --search-steps %d", options.SearchSteps)
	}
	// Where the file goes is checked before the shrink, which may take
	// minutes, rather than after it.
	dir := filepath.Join("scenarios", "regressions")
	if out != "" {
		dir = filepath.Dir(out)
	}
	if info, err := os.Stat(dir); err != nil || !info.IsDir() {
		fmt.Fprintf(os.Stderr, "sluice sim: --shrink writes into %s, which is not a directory here; run it from the repository's root or give --out\n", dir)
		return 2
	}
	run := func(candidate scenario.Scenario) sim.Result { return clusterworkload.RunScenario(candidate, options) }
	original := run(s)
	fmt.Println(original.Line())
	if original.Passed() {
		fmt.Fprintln(os.Stderr, "sluice sim: the run passes: nothing to shrink")
		return 2
	}
	outcome := shrink.Shrink(s, original.Check, original, shrink.Options{
		Run: run,
		Progress: func(step string, candidate scenario.Scenario) {
			fmt.Fprintf(os.Stderr, "shrink: %s (size %d)\n", step, shrink.Size(candidate))
		},
	})
	if out == "" {
		out = filepath.Join(dir, shrink.FileName(clusterworkload.Name, outcome.Check, s.Seed))
	}
	// A canary named by the scenario file is planted as one given with
	// --canary: the shrunk file expects its failure too.
	canaries := append(slices.Clone(options.Canaries), s.Canaries...)
	slices.Sort(canaries)
	canaries = slices.Compact(canaries)
	text := shrink.File(outcome, shrink.Origin{
		Workload: clusterworkload.Name, Seed: s.Seed, Canaries: canaries, Command: command, Path: out,
		SearchSteps:  options.SearchSteps,
		OriginalSize: shrink.Size(s), OriginalEvents: shrink.FaultEvents(s),
		Revision: thisBuild().knownRevision(),
	})
	if err := os.WriteFile(out, []byte(text), 0o644); err != nil {
		fmt.Fprintln(os.Stderr, "sluice sim:", err)
		return 2
	}
	replayShrunk := simCommand() + " --scenario " + out
	if options.SearchSteps != 0 {
		replayShrunk += fmt.Sprintf(" --search-steps %d", options.SearchSteps)
	}
	fmt.Printf("shrunk: size %d -> %d, events %d -> %d in %d runs; still fails %s\nwrote %s\nreplay: %s\n",
		shrink.Size(s), shrink.Size(outcome.Scenario), shrink.FaultEvents(s), shrink.FaultEvents(outcome.Scenario), outcome.Runs, outcome.Check, out, replayShrunk)
	return 0
}

// isTerminal reports whether f is a terminal rather than a file or pipe.
func isTerminal(f *os.File) bool {
	info, err := f.Stat()
	return err == nil && info.Mode()&os.ModeCharDevice != 0
}

// simCommand is this binary's sim command as the user ran it (bin/sluice
// sim, ./sluice sim, or sluice sim from PATH), so that the commands it
// prints can be pasted as they are; under `go run`, whose binary is gone
// once it exits, it is go run ./cmd/sluice sim.
func simCommand() string {
	name := os.Args[0]
	switch {
	case name == "":
		name = "sluice"
	case strings.Contains(name, string(filepath.Separator)+"go-build"):
		name = "go run ./cmd/sluice"
	}
	return name + " sim"
}

// simFlagConflict names the first pair of given flags that do not go
// together, or "" when none: each would otherwise be silently ignored.
func simFlagConflict(given map[string]bool) string {
	switch {
	case given["seed"] && given["seeds"]:
		return "give --seed or --seeds, not both"
	case given["trace"] && given["seeds"]:
		return "--trace prints one run's events; give --seed (a sweep prints the replay command of its first failure)"
	case !given["seeds"] && (given["time-box"] || given["keep-going"] || given["workers"]) && !given["canaries"]:
		return "--time-box, --keep-going and --workers shape a sweep; give --seeds, or leave them out for one run"
	case given["log-level"] && !given["trace"] && !given["determinism"]:
		return "--log-level puts core's log lines in the trace; give --trace (or --determinism)"
	case given["out"] && !given["shrink"]:
		return "--out names the file --shrink writes; give --shrink"
	}
	return ""
}

// canaryWorkloads lists the workloads the catalog says catch a canary.
func canaryWorkloads(name string) []string {
	var workloads []string
	for _, c := range catalog.Canaries() {
		if c.Name == name {
			workloads = append(workloads, c.Workload)
		}
	}
	return workloads
}

// canaryReachable reports whether a workload runs the code a canary is
// planted in: the cluster and broker workloads run all of core, the log
// and quorum workloads only their own package.
func canaryReachable(workload string, caught []string) bool {
	if workload == clusterworkload.Name || workload == brokerworkload.Name {
		return true
	}
	return slices.Contains(caught, workload)
}
