package guard

import (
	"fmt"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// fixtureModule is a module of deliberately bad (and good) packages. It
// sits under testdata, so the go tool never builds it as part of sluice.
const fixtureModule = "testdata/fixture"

func fixtureDir(t *testing.T) string {
	t.Helper()
	dir, err := filepath.Abs(fixtureModule)
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestCheckReportsExactlyTheMarkedLines runs Check on the fixture packages
// and compares every finding (file, line and rule) with the "// want rule"
// markers in their source: each marked rule found once, nothing else found.
// The unmarked lines include the cases that must pass: a string and a
// comment mentioning time.Now and go func, the collect-then-sort idiom, an
// order-independent comment with a reason, and pure uses of package time.
func TestCheckReportsExactlyTheMarkedLines(t *testing.T) {
	for _, name := range []string{"bad", "dotimport", "clean"} {
		t.Run(name, func(t *testing.T) {
			dir := fixtureDir(t)
			findings, err := CheckIn(dir, "fixture/"+name)
			if err != nil {
				t.Fatal(err)
			}
			var found []string
			for _, finding := range findings {
				if filepath.Dir(finding.Position.Filename) != filepath.Join(dir, name) {
					t.Errorf("finding outside the package: %s", finding)
				}
				found = append(found, fmt.Sprintf("%s:%d %s",
					filepath.Base(finding.Position.Filename), finding.Position.Line, finding.Rule))
			}
			want := wantMarkers(t, filepath.Join(dir, name))
			slices.Sort(found)
			if !slices.Equal(found, want) {
				t.Errorf("findings differ from the want markers\nmissing: %v\nunexpected: %v\nall findings:\n%s",
					without(want, found), without(found, want), formatFindings(findings))
			}
		})
	}
}

// TestCheckNamesWhatItResolved checks messages and positions of the cases
// that need type information: an alias import, a function value and a dot
// import all resolve to time.Now itself.
func TestCheckNamesWhatItResolved(t *testing.T) {
	dir := fixtureDir(t)
	findings, err := CheckIn(dir, "fixture/bad", "fixture/dotimport")
	if err != nil {
		t.Fatal(err)
	}
	const nowMessage = "time.Now reads the wall clock; use World.Clock.Now"
	want := []string{
		"bad/clock.go:7:15 time: " + nowMessage,  // clock.Now().UnixNano()
		"bad/clock.go:12:15 time: " + nowMessage, // now := clock.Now
		"dotimport/dotimport.go:7:9 time: " + nowMessage,
	}
	var got []string
	for _, finding := range findings {
		if finding.Message == nowMessage {
			relative, err := filepath.Rel(dir, finding.Position.Filename)
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, fmt.Sprintf("%s:%d:%d %s: %s", filepath.ToSlash(relative),
				finding.Position.Line, finding.Position.Column, finding.Rule, finding.Message))
		}
	}
	if !slices.Equal(got, want) {
		t.Errorf("time.Now findings:\ngot  %q\nwant %q", got, want)
	}
}

// TestCheckExplainsAMissingReason: an order-independent comment with
// nothing after the colon excuses nothing and says what is missing.
func TestCheckExplainsAMissingReason(t *testing.T) {
	findings, err := CheckIn(fixtureDir(t), "fixture/bad")
	if err != nil {
		t.Fatal(err)
	}
	var reasons []string
	for _, finding := range findings {
		if strings.Contains(finding.Message, "needs a reason") {
			reasons = append(reasons, fmt.Sprintf("%s:%d %s",
				filepath.Base(finding.Position.Filename), finding.Position.Line, finding.Message))
		}
	}
	want := []string{`maps.go:39 range over fixture/bad.Index: the "order-independent:" comment needs a reason after the colon`}
	if !slices.Equal(reasons, want) {
		t.Errorf("got %q\nwant %q", reasons, want)
	}
}

// TestCheckRefusesWhatItCannotCheck: a package that does not type-check, a
// pattern matching nothing and no pattern at all are errors, never a pass.
func TestCheckRefusesWhatItCannotCheck(t *testing.T) {
	dir := fixtureDir(t)
	cases := []struct {
		patterns []string
		message  string
	}{
		{[]string{"fixture/broken"}, "fixture/broken"},
		{[]string{"fixture/nothing/..."}, "matched no packages"},
		{nil, "no package patterns"},
	}
	for _, c := range cases {
		findings, err := CheckIn(dir, c.patterns...)
		if err == nil || !strings.Contains(err.Error(), c.message) {
			t.Errorf("CheckIn(%q) = %v, %v; want an error mentioning %q", c.patterns, findings, err, c.message)
		}
	}
}

// wantMarkers reads "// want rule [rule...]" comments from the Go files in
// dir and returns one sorted "file:line rule" entry per rule named.
func wantMarkers(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	fileSet := token.NewFileSet()
	var want []string
	for _, entry := range entries {
		if !strings.HasSuffix(entry.Name(), ".go") {
			continue
		}
		file, err := parser.ParseFile(fileSet, filepath.Join(dir, entry.Name()), nil, parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		for _, group := range file.Comments {
			for _, comment := range group.List {
				text := strings.TrimSpace(strings.TrimPrefix(comment.Text, "//"))
				rules, isMarker := strings.CutPrefix(text, "want ")
				if !isMarker {
					continue
				}
				line := fileSet.Position(comment.Pos()).Line
				for _, rule := range strings.Fields(rules) {
					want = append(want, fmt.Sprintf("%s:%d %s", entry.Name(), line, rule))
				}
			}
		}
	}
	slices.Sort(want)
	return want
}

// without returns the entries of all that are not in taken, counting
// duplicates: both slices are sorted.
func without(all, taken []string) []string {
	var left []string
	remaining := slices.Clone(taken)
	for _, entry := range all {
		if index := slices.Index(remaining, entry); index >= 0 {
			remaining = slices.Delete(remaining, index, index+1)
			continue
		}
		left = append(left, entry)
	}
	return left
}

func formatFindings(findings []Finding) string {
	var lines []string
	for _, finding := range findings {
		lines = append(lines, "\t"+finding.String())
	}
	return strings.Join(lines, "\n")
}
