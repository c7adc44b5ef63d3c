package catalog

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"sluice/sim"
	"sluice/sim/scenario"
)

// scenariosRoot is the repository's scenarios/ folder, from this package.
const scenariosRoot = "../../scenarios"

// TestScenarioFilesKeepTheirPromises replays every file under scenarios/:
// the named scenarios (leader isolation, power loss of every node, ...)
// and every regression case, whose seeds must pass now that their bugs
// are fixed. Each run must end as the file's `expect` line says, and
// reach every "# require" stat, which proves the fault a file is named
// for really happened.
func TestScenarioFilesKeepTheirPromises(t *testing.T) {
	files, err := ScenarioFiles(scenariosRoot)
	if err != nil {
		t.Fatal(err)
	}
	named := 0
	for _, file := range files {
		if filepath.Dir(file) == filepath.Clean(scenariosRoot) {
			named++
		}
	}
	if named < namedScenariosMin {
		t.Fatalf("%d named scenario files under scenarios/, want at least %d", named, namedScenariosMin)
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			t.Parallel()
			f, err := LoadScenarioFile(file, 0)
			if err != nil {
				t.Fatal(err)
			}
			if filepath.Dir(file) == filepath.Clean(scenariosRoot) && len(f.Requires) == 0 {
				t.Fatalf("%s names no \"# require\" stat: nothing shows its fault happens", file)
			}
			r := RunScenario(f.Scenario, sim.RunOptions{})
			if err := f.Judge(r); err != nil {
				t.Fatalf("%s: %v\n%s", file, err, r.Line())
			}
		})
	}
}

// namedScenariosMin is the named scenarios issue 7 asks for: leader
// isolation, power loss of every node, rolling restart, asymmetric
// partition, slow disk on a leader, clock jump.
const namedScenariosMin = 6

// TestClusterRegressionsPinTheirScenario holds every cluster-workload
// regression file to the full scenario format. A bare seed
// (`sluice sim --seed 2071`) replays whatever the swarm draws for it
// today, and the draw changes as Sluice grows, so such a file would
// silently stop replaying the run that failed.
func TestClusterRegressionsPinTheirScenario(t *testing.T) {
	files, err := ScenarioFiles(filepath.Join(scenariosRoot, "regressions"))
	if err != nil {
		t.Fatal(err)
	}
	cluster := 0
	for _, file := range files {
		text, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		f, err := ParseScenarioFile(string(text), 0)
		if err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		if f.Scenario.Workload != scenario.WorkloadCluster {
			continue
		}
		cluster++
		if _, isCommand := commandLine(string(text)); isCommand {
			t.Errorf("%s is a bare seed; write the scenario it drew (scenario.Format(scenario.Draw(seed))) so the file keeps replaying the same run", file)
		}
	}
	if cluster == 0 {
		t.Fatal("no cluster-workload regression files found")
	}
}

// TestFullScenarioFilesLeaveNothingToTheDraw holds every regression file
// written whole (scenario.Format's output, which names every node's clock)
// to naming every setting: parsed under another seed's draw, it must give
// the same scenario. A setting the swarm learns to draw later would
// otherwise slip into old files from their seed and move their runs.
func TestFullScenarioFilesLeaveNothingToTheDraw(t *testing.T) {
	files, err := ScenarioFiles(filepath.Join(scenariosRoot, "regressions"))
	if err != nil {
		t.Fatal(err)
	}
	full := 0
	for _, file := range files {
		text, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(text), "\nclocks ") {
			continue // a partial file: what it leaves open is its seed's
		}
		full++
		own, err := scenario.Parse(string(text))
		if err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		// The last seed line wins: the other seed's draw fills what the
		// file leaves open; then the file's own seed goes back.
		other, err := scenario.Parse(string(text) + fmt.Sprintf("\nseed %d\n", own.Seed+1))
		if err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		other.Seed = own.Seed
		if diff := cmp.Diff(own, other); diff != "" {
			t.Errorf("%s leaves settings to its seed's draw (-own +another seed's):\n%s", file, diff)
		}
	}
	if full == 0 {
		t.Fatal("no full regression files found")
	}
}
