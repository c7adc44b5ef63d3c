package guard

import (
	"slices"
	"strings"
	"testing"
)

// TestImportGraphListsEveryEdge: the edges of fixture/graph/top and its
// dependencies, the standard library's own imports left out, each marked
// standard or not.
func TestImportGraphListsEveryEdge(t *testing.T) {
	edges, err := ImportGraphIn(fixtureDir(t), "fixture/graph/top")
	if err != nil {
		t.Fatal(err)
	}
	want := []Import{
		{Importer: "fixture/graph/bottom", Imported: "strings", ImportedIsStandard: true},
		{Importer: "fixture/graph/top", Imported: "fixture/graph/bottom", ImportedIsStandard: false},
		{Importer: "fixture/graph/top", Imported: "fmt", ImportedIsStandard: true},
	}
	if !slices.Equal(edges, want) {
		t.Errorf("edges:\ngot  %v\nwant %v", edges, want)
	}
	if got := want[1].String(); got != "fixture/graph/top → fixture/graph/bottom" {
		t.Errorf("Import.String() = %q", got)
	}
}

// TestImportGraphRefusesWhatItCannotList: a missing import, a pattern
// matching nothing and no pattern at all are errors, never an empty graph.
func TestImportGraphRefusesWhatItCannotList(t *testing.T) {
	cases := []struct {
		patterns []string
		message  string
	}{
		{[]string{"fixture/missingimport"}, "fixture/nowhere"},
		{[]string{"fixture/nothing/..."}, "matched no packages"},
		{nil, "no package patterns"},
	}
	for _, c := range cases {
		edges, err := ImportGraphIn(fixtureDir(t), c.patterns...)
		if err == nil || !strings.Contains(err.Error(), c.message) {
			t.Errorf("ImportGraphIn(%q) = %v, %v; want an error mentioning %q", c.patterns, edges, err, c.message)
		}
	}
}
