package catalog

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"sluice/sim"
	"sluice/sim/clusterworkload"
	"sluice/sim/scenario"
)

// A scenario file is a sim/scenario text file under scenarios/: a named
// scenario (scenarios/leader-isolation.txt) or a regression case
// (scenarios/regressions/). Two things ride in its comments, which the
// scenario format ignores:
//
//   - "# require NAME>=N" lines name a stat of the run's result line that
//     must reach N (fault_isolate>=1, crashes>=3): proof that the fault
//     the file is named for really happened, so a file cannot quietly
//     stop testing what it says;
//   - an older regression file is only a command line
//     (`go run ./cmd/sluice sim --workload broker --seed 35`), read as
//     "workload broker, seed 35".

// ScenarioFile is one scenario file, parsed.
type ScenarioFile struct {
	Path     string
	Scenario scenario.Scenario
	// Requires are the file's "# require" lines.
	Requires []Requirement
}

// Requirement is a stat that a run of the file must reach.
type Requirement struct {
	Stat    string
	AtLeast int64
}

func (q Requirement) String() string { return fmt.Sprintf("%s>=%d", q.Stat, q.AtLeast) }

// scenarioFileBytesMax bounds a scenario file: a full schedule of
// scenario's eventsMax lines fits with room to spare.
const scenarioFileBytesMax = 256 << 10

// LoadScenarioFile reads and parses a scenario file. A nonzero seed
// replaces the file's own, so the same fault schedule runs with other
// latencies, tie-breaks and drawn settings.
func LoadScenarioFile(path string, seed uint64) (ScenarioFile, error) {
	info, err := os.Stat(path)
	if err != nil {
		return ScenarioFile{}, err
	}
	if info.Size() > scenarioFileBytesMax {
		return ScenarioFile{}, fmt.Errorf("%s: %d bytes, more than the %d a scenario file may hold", path, info.Size(), scenarioFileBytesMax)
	}
	text, err := os.ReadFile(path)
	if err != nil {
		return ScenarioFile{}, err
	}
	f, err := ParseScenarioFile(string(text), seed)
	if err != nil {
		return ScenarioFile{}, fmt.Errorf("%s: %w", path, err)
	}
	f.Path = path
	return f, nil
}

// ParseScenarioFile parses a scenario file's text (see LoadScenarioFile).
func ParseScenarioFile(text string, seed uint64) (ScenarioFile, error) {
	var f ScenarioFile
	requires, err := parseRequirements(text)
	if err != nil {
		return f, err
	}
	f.Requires = requires
	if command, ok := commandLine(text); ok {
		text = command
	}
	if seed != 0 {
		// The last seed line wins (see scenario.Parse).
		text += fmt.Sprintf("\nseed %d\n", seed)
	}
	s, err := scenario.Parse(text)
	if err != nil {
		return f, err
	}
	if s.Workload != scenario.WorkloadCluster {
		if _, ok := Workload(s.Workload); !ok {
			return f, fmt.Errorf("unknown workload %q (have: %s)", s.Workload, strings.Join(WorkloadNames(), ", "))
		}
	}
	for _, name := range s.Canaries {
		if _, ok := Canary(name); !ok {
			return f, fmt.Errorf("unknown canary %q", name)
		}
	}
	if s.Profile != "" && !slices.Contains(clusterworkload.Profiles(), s.Profile) {
		return f, fmt.Errorf("unknown profile %q (have: %s)", s.Profile, strings.Join(clusterworkload.Profiles(), ", "))
	}
	f.Scenario = s
	return f, nil
}

// parseRequirements reads the "# require NAME>=N ..." comment lines.
func parseRequirements(text string) ([]Requirement, error) {
	var requires []Requirement
	for i, line := range strings.Split(text, "\n") {
		comment, isComment := strings.CutPrefix(strings.TrimSpace(line), "#")
		if !isComment {
			continue
		}
		words := strings.Fields(comment)
		if len(words) == 0 || words[0] != "require" {
			continue
		}
		for _, word := range words[1:] {
			stat, number, ok := strings.Cut(word, ">=")
			atLeast, err := strconv.ParseInt(number, 10, 64)
			if !ok || stat == "" || err != nil {
				return nil, fmt.Errorf("line %d: require %q; want NAME>=N", i+1, word)
			}
			requires = append(requires, Requirement{Stat: stat, AtLeast: atLeast})
		}
	}
	return requires, nil
}

// commandLine turns an older regression file, whose one non-comment line
// is a `sluice sim --workload W --seed S [--canary C]` command, into the
// scenario directives that say the same. It reports false for a file in
// the scenario format.
func commandLine(text string) (string, bool) {
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		fields := strings.Fields(line)
		if !slices.Contains(fields, "sim") || !slices.Contains(fields, "--seed") {
			return "", false
		}
		var b strings.Builder
		for i := 0; i+1 < len(fields); i++ {
			switch fields[i] {
			case "--workload":
				fmt.Fprintf(&b, "workload %s\n", fields[i+1])
			case "--seed":
				fmt.Fprintf(&b, "seed %s\n", fields[i+1])
			case "--canary":
				fmt.Fprintf(&b, "canary %s\n", strings.ReplaceAll(fields[i+1], ",", " "))
			}
		}
		return b.String(), true
	}
	return "", false
}

// RunScenario runs a scenario on its workload: the cluster workload runs
// it as written; another workload replays its seed with the scenario's
// canaries on top of the options'.
func RunScenario(s scenario.Scenario, options sim.RunOptions) sim.Result {
	if s.Workload == scenario.WorkloadCluster {
		return clusterworkload.RunScenario(s, options)
	}
	w, ok := Workload(s.Workload)
	if !ok {
		return sim.Result{Seed: s.Seed, Check: "scenario", Detail: fmt.Sprintf("unknown workload %q", s.Workload)}
	}
	options.Canaries = append(slices.Clone(options.Canaries), s.Canaries...)
	return w.Run(s.Seed, options)
}

// Judge says whether a run of the file kept its promises: the outcome its
// `expect` line names (a pass unless it says fail, and then the check it
// names), and every "# require" stat.
func (f ScenarioFile) Judge(r sim.Result) error {
	expect := f.Scenario.Expect
	switch {
	case !expect.Fail && !r.Passed():
		return fmt.Errorf("expected a pass, failed check %s: %s", r.Check, r.Detail)
	case expect.Fail && r.Passed():
		return fmt.Errorf("expected check %q to fail, the run passed", expect.Check)
	case expect.Fail && expect.Check != "" && r.Check != expect.Check:
		return fmt.Errorf("expected check %s to fail, check %s failed: %s", expect.Check, r.Check, r.Detail)
	}
	for _, q := range f.Requires {
		have, _ := r.Stat(q.Stat) // an unlisted stat is zero
		if have < q.AtLeast {
			return fmt.Errorf("requires %s, the run has %s=%d: the fault the file is named for did not happen", q, q.Stat, have)
		}
	}
	return nil
}

// ScenarioFiles lists every scenario file under root (scenarios/),
// named ones and regressions, sorted.
func ScenarioFiles(root string) ([]string, error) {
	var files []string
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && strings.HasSuffix(path, ".txt") {
			files = append(files, path)
		}
		return nil
	})
	slices.Sort(files)
	return files, err
}
