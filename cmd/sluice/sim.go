package main

import (
	"flag"
	"fmt"
	"os"
	"strings"
	"text/tabwriter"

	"sluice/sim"
	"sluice/sim/catalog"
)

func init() {
	register("sim", "run the deterministic simulator: one seed, or a sweep of seeds", runSim)
}

func runSim(args []string) int {
	flags := flag.NewFlagSet("sim", flag.ContinueOnError)
	workloadName := flags.String("workload", catalog.DefaultWorkload, "workload to run: "+strings.Join(catalog.WorkloadNames(), ", "))
	seed := flags.Uint64("seed", 0, "run this one seed and print its result line")
	seeds := flags.String("seeds", "", "sweep a seed range A-B (inclusive)")
	workers := flags.Int("workers", 0, "seeds run in parallel during a sweep (default: one per CPU)")
	keepGoing := flags.Bool("keep-going", false, "keep sweeping after a failure")
	canaries := flags.String("canary", "", "comma-separated planted bugs to switch on (see --list-canaries)")
	listCanaries := flags.Bool("list-canaries", false, "list the planted bugs and the workload that catches each")
	trace := flags.Bool("trace", false, "print the event trace of a single seed")
	if err := flags.Parse(args); err != nil {
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
	workload, ok := catalog.Workload(*workloadName)
	if !ok {
		fmt.Fprintf(os.Stderr, "sluice sim: unknown workload %q (have: %s)\n", *workloadName, strings.Join(catalog.WorkloadNames(), ", "))
		return 2
	}
	options := sim.RunOptions{}
	if *canaries != "" {
		for _, name := range strings.Split(*canaries, ",") {
			if _, known := catalog.Canary(name); !known {
				fmt.Fprintf(os.Stderr, "sluice sim: unknown canary %q (see --list-canaries)\n", name)
				return 2
			}
			options.Canaries = append(options.Canaries, name)
		}
	}
	replay := func(s uint64) string {
		line := fmt.Sprintf("sluice sim --workload %s --seed %d", workload.Name(), s)
		if *canaries != "" {
			line += " --canary " + *canaries
		}
		return line
	}

	switch {
	case *seeds != "" && *seed != 0:
		fmt.Fprintln(os.Stderr, "sluice sim: give --seed or --seeds, not both")
		return 2
	case *seeds == "":
		if *trace {
			options.Trace = os.Stdout
		}
		result := workload.Run(*seed, options)
		fmt.Println(result.Line())
		if !result.Passed() {
			return 1
		}
		return 0
	}

	r, err := sim.ParseSeedRange(*seeds)
	if err != nil {
		fmt.Fprintln(os.Stderr, "sluice sim:", err)
		return 2
	}
	summary := sim.Sweep(workload, r, sim.SweepOptions{
		Run:       options,
		Workers:   *workers,
		KeepGoing: *keepGoing,
		Progress:  os.Stderr,
		Failures:  os.Stdout,
	})
	if f := summary.FirstFailure; f != nil {
		fmt.Printf("first failure: seed %d failed check %s\nreplay: %s\n", f.Seed, f.Check, replay(f.Seed))
	}
	fmt.Println(summary.Line())
	if summary.Failed > 0 {
		return 1
	}
	return 0
}
