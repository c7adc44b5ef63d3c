package guard

import (
	"errors"
	"fmt"
	"go/ast"
	"go/token"
	"go/types"
	"slices"
	"strings"

	"golang.org/x/tools/go/packages"
)

// loadMode asks go/packages for what the rules need: every non-test file
// parsed with comments and fully type-checked. Dependencies come from export
// data, so only the checked packages themselves are type-checked from source.
const loadMode = packages.NeedName |
	packages.NeedFiles |
	packages.NeedCompiledGoFiles |
	packages.NeedImports |
	packages.NeedSyntax |
	packages.NeedTypes |
	packages.NeedTypesInfo

// Check loads the non-test packages matched by patterns (as the go command
// reads them, e.g. "sluice/core/...") from the current directory's module
// and reports every finding, sorted by position. It returns an error if a
// package fails to load or type-check, or if the patterns match nothing:
// a guard that looked at nothing must not pass.
func Check(patterns ...string) ([]Finding, error) {
	return CheckIn("", patterns...)
}

// CheckIn is Check run from dir, for packages of another module such as the
// fixtures under testdata. An empty dir is the current directory.
func CheckIn(dir string, patterns ...string) ([]Finding, error) {
	if len(patterns) == 0 {
		return nil, errors.New("guard: no package patterns given")
	}
	config := &packages.Config{Mode: loadMode, Dir: dir, Tests: false}
	loaded, err := packages.Load(config, patterns...)
	if err != nil {
		return nil, fmt.Errorf("guard: loading %s: %w", strings.Join(patterns, " "), err)
	}
	if len(loaded) == 0 {
		return nil, fmt.Errorf("guard: %s matched no packages", strings.Join(patterns, " "))
	}
	if err := loadErrors(loaded); err != nil {
		return nil, err
	}
	var findings []Finding
	for _, pkg := range loaded {
		findings = append(findings, checkPackage(pkg)...)
	}
	sortFindings(findings)
	return findings, nil
}

// loadErrors joins every package's load, parse and type errors. Rules
// depend on complete type information, so any of them stops the check.
func loadErrors(loaded []*packages.Package) error {
	var messages []string
	for _, pkg := range loaded {
		for _, problem := range pkg.Errors {
			messages = append(messages, fmt.Sprintf("%s: %s", pkg.PkgPath, problem))
		}
		if len(pkg.Errors) == 0 && (pkg.Types == nil || pkg.TypesInfo == nil) {
			messages = append(messages, fmt.Sprintf("%s: no type information", pkg.PkgPath))
		}
	}
	if len(messages) == 0 {
		return nil
	}
	slices.Sort(messages)
	return fmt.Errorf("guard: packages did not load cleanly:\n\t%s", strings.Join(messages, "\n\t"))
}

func checkPackage(pkg *packages.Package) []Finding {
	var findings []Finding
	for _, file := range pkg.Syntax {
		checker := &fileChecker{
			fileSet: pkg.Fset,
			info:    pkg.TypesInfo,
			file:    file,
			notes:   findOrderNotes(pkg.Fset, file),
		}
		checker.walk()
		findings = append(findings, checker.findings...)
	}
	return findings
}

// fileChecker applies every rule to one file.
type fileChecker struct {
	fileSet  *token.FileSet
	info     *types.Info
	file     *ast.File
	notes    orderNotes
	findings []Finding
}

// walk visits every node of the file once. The stack holds the node's
// ancestors, innermost last, for rules that look at the context of a node
// (the function around a loop, the call around maps.Keys).
func (c *fileChecker) walk() {
	var stack []ast.Node
	ast.Inspect(c.file, func(node ast.Node) bool {
		if node == nil {
			stack = stack[:len(stack)-1]
			return false
		}
		c.visit(node, stack)
		stack = append(stack, node)
		return true
	})
	if len(stack) != 0 {
		panic(fmt.Sprintf("guard: walk ended %d nodes deep", len(stack)))
	}
}

func (c *fileChecker) visit(node ast.Node, stack []ast.Node) {
	switch node := node.(type) {
	case *ast.GoStmt:
		c.report(node.Go, RuleGoroutine,
			"go statement starts a goroutine; core runs only on its node's loop (use World.Clock.AfterFunc to run something later)")
	case *ast.SelectStmt:
		c.report(node.Select, RuleSelect,
			"select statement picks among ready cases at random; core must not block or choose by chance")
	case *ast.ImportSpec:
		c.checkImport(node)
	case *ast.RangeStmt:
		c.checkRange(node, stack)
	case *ast.Ident:
		c.checkUse(node, stack)
	}
}

func (c *fileChecker) report(at token.Pos, rule, message string) {
	c.findings = append(c.findings, Finding{
		Position: c.fileSet.Position(at),
		Rule:     rule,
		Message:  message,
	})
}
