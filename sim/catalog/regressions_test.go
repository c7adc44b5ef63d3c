package catalog

import (
	"path/filepath"
	"testing"

	"sluice/sim"
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
