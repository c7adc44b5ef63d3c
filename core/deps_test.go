package core_test

import (
	"strings"
	"testing"

	"sluice/internal/guard"
)

// TestCoreImportsOnlyAllowed keeps the import graph the shape DESIGN.md
// draws: core/ sits at the bottom and may import only the standard library,
// kmsg (with its internal packages), kerr (Kafka's error codes, a pure
// table) and other core/ packages. Anything else,
// and above all disk/, net/, node/, sim/, jepsen/ or cmd/, would drag I/O or
// the simulator into the deterministic core. Every package core depends on,
// kmsg included, is held to the same list; test files are not.
func TestCoreImportsOnlyAllowed(t *testing.T) {
	edges, err := guard.ImportGraph("sluice/core/...")
	if err != nil {
		t.Fatal(err)
	}
	importers := map[string]bool{}
	for _, edge := range edges {
		importers[edge.Importer] = true
		if !coreMayImport(edge) {
			t.Errorf("forbidden import: %s", edge)
		}
	}
	// A graph without core in it would pass vacuously.
	if !importers["sluice/core"] {
		t.Errorf("import graph has no edges from sluice/core; got importers %v", importers)
	}
}

// coreMayImport is the allowlist for packages under core/ and everything
// they pull in.
func coreMayImport(edge guard.Import) bool {
	return edge.ImportedIsStandard ||
		isPackageOrBelow(edge.Imported, "github.com/twmb/franz-go/pkg/kmsg") ||
		edge.Imported == "github.com/twmb/franz-go/pkg/kerr" ||
		isPackageOrBelow(edge.Imported, "sluice/core")
}

func isPackageOrBelow(importPath, root string) bool {
	return importPath == root || strings.HasPrefix(importPath, root+"/")
}
