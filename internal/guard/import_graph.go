package guard

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"slices"
	"strings"
)

// Import is one edge of the import graph: package Importer's non-test
// source imports package Imported.
type Import struct {
	Importer string
	Imported string
	// ImportedIsStandard is true when Imported is part of the standard
	// library, as the go command decides it.
	ImportedIsStandard bool
}

// String formats the edge as "importer → imported".
func (edge Import) String() string {
	return edge.Importer + " → " + edge.Imported
}

// ImportGraph returns every import made by the non-test packages matched by
// patterns and by every package they depend on, except the standard
// library's own imports (which are the toolchain's business). Edges are
// sorted by importer, then imported. It asks `go list -deps -json`, run
// from the current directory's module, and returns an error if any package
// in the graph fails to load or if the patterns match nothing.
func ImportGraph(patterns ...string) ([]Import, error) {
	return ImportGraphIn("", patterns...)
}

// ImportGraphIn is ImportGraph run from dir, for packages of another module
// such as the fixtures under testdata. An empty dir is the current directory.
func ImportGraphIn(dir string, patterns ...string) ([]Import, error) {
	if len(patterns) == 0 {
		return nil, errors.New("guard: no package patterns given")
	}
	listed, err := goListDependencies(dir, patterns)
	if err != nil {
		return nil, err
	}
	if len(listed) == 0 {
		return nil, fmt.Errorf("guard: %s matched no packages", strings.Join(patterns, " "))
	}
	standard := map[string]bool{}
	var problems []string
	for _, pkg := range listed {
		standard[pkg.ImportPath] = pkg.Standard
		if pkg.Error != nil {
			problems = append(problems, pkg.ImportPath+": "+pkg.Error.Err)
		}
	}
	if len(problems) != 0 {
		slices.Sort(problems)
		return nil, fmt.Errorf("guard: packages did not load cleanly:\n\t%s", strings.Join(problems, "\n\t"))
	}
	var edges []Import
	for _, pkg := range listed {
		if pkg.Standard {
			continue
		}
		for _, imported := range pkg.Imports {
			isStandard, listedToo := standard[imported]
			if !listedToo {
				return nil, fmt.Errorf("guard: go list -deps named %s as an import of %s but did not list it", imported, pkg.ImportPath)
			}
			edges = append(edges, Import{Importer: pkg.ImportPath, Imported: imported, ImportedIsStandard: isStandard})
		}
	}
	slices.SortFunc(edges, func(a, b Import) int {
		return cmp.Or(cmp.Compare(a.Importer, b.Importer), cmp.Compare(a.Imported, b.Imported))
	})
	return edges, nil
}

// listedPackage is the part of `go list -json` output ImportGraph reads.
type listedPackage struct {
	ImportPath string
	Standard   bool
	Imports    []string
	Error      *struct{ Err string }
}

// goListDependencies runs `go list -e -deps -json` and decodes its stream of
// JSON objects. With -e a broken package is reported in its Error field
// rather than stopping the listing, so every problem is seen at once.
func goListDependencies(dir string, patterns []string) ([]listedPackage, error) {
	arguments := append([]string{"list", "-e", "-deps", "-json=ImportPath,Standard,Imports,Error"}, patterns...)
	command := exec.Command("go", arguments...)
	command.Dir = dir
	var stdout, stderr bytes.Buffer
	command.Stdout = &stdout
	command.Stderr = &stderr
	if err := command.Run(); err != nil {
		return nil, fmt.Errorf("guard: go %s: %w\n%s", strings.Join(arguments, " "), err, stderr.String())
	}
	var listed []listedPackage
	decoder := json.NewDecoder(&stdout)
	for {
		var pkg listedPackage
		err := decoder.Decode(&pkg)
		if errors.Is(err, io.EOF) {
			return listed, nil
		}
		if err != nil {
			return nil, fmt.Errorf("guard: decoding go list output: %w", err)
		}
		listed = append(listed, pkg)
	}
}
