package guard

import (
	"go/ast"
	"go/types"
	"strings"
)

// ban is a rule and the reason it gives.
type ban struct {
	rule   string
	reason string
}

// forbiddenObjects are functions, methods and variables core may not use,
// keyed by their qualified name: types.Func.FullName for functions and
// methods ("time.Now", "(time.Time).Local"), "package/path.Name" for
// package-level variables. A use is found through type information, so an
// alias import, a dot import or a function value is caught as well as a call.
var forbiddenObjects = map[string]ban{
	"time.Now":          {RuleTime, "reads the wall clock; use World.Clock.Now"},
	"time.Since":        {RuleTime, "reads the wall clock; use World.Clock.Elapsed"},
	"time.Until":        {RuleTime, "reads the wall clock; use World.Clock.Elapsed"},
	"time.Sleep":        {RuleTime, "blocks the loop; use World.Clock.AfterFunc"},
	"time.After":        {RuleTime, "starts a real timer; use World.Clock.AfterFunc"},
	"time.AfterFunc":    {RuleTime, "starts a real timer on another goroutine; use World.Clock.AfterFunc"},
	"time.Tick":         {RuleTime, "starts a real ticker; use World.Clock.AfterFunc"},
	"time.NewTimer":     {RuleTime, "starts a real timer; use World.Clock.AfterFunc"},
	"time.NewTicker":    {RuleTime, "starts a real ticker; use World.Clock.AfterFunc"},
	"time.LoadLocation": {RuleTime, "reads the time zone database from the OS"},
	"time.Local":        {RuleTime, "is the machine's time zone, which differs between machines"},
	"(time.Time).Local": {RuleTime, "converts to the machine's time zone, which differs between machines"},

	"log/slog.Debug":             {RuleGlobalOutput, "logs to slog's process-wide default logger; use World.Log"},
	"log/slog.DebugContext":      {RuleGlobalOutput, "logs to slog's process-wide default logger; use World.Log"},
	"log/slog.Info":              {RuleGlobalOutput, "logs to slog's process-wide default logger; use World.Log"},
	"log/slog.InfoContext":       {RuleGlobalOutput, "logs to slog's process-wide default logger; use World.Log"},
	"log/slog.Warn":              {RuleGlobalOutput, "logs to slog's process-wide default logger; use World.Log"},
	"log/slog.WarnContext":       {RuleGlobalOutput, "logs to slog's process-wide default logger; use World.Log"},
	"log/slog.Error":             {RuleGlobalOutput, "logs to slog's process-wide default logger; use World.Log"},
	"log/slog.ErrorContext":      {RuleGlobalOutput, "logs to slog's process-wide default logger; use World.Log"},
	"log/slog.Log":               {RuleGlobalOutput, "logs to slog's process-wide default logger; use World.Log"},
	"log/slog.LogAttrs":          {RuleGlobalOutput, "logs to slog's process-wide default logger; use World.Log"},
	"log/slog.Default":           {RuleGlobalOutput, "is slog's process-wide default logger; use World.Log"},
	"log/slog.SetDefault":        {RuleGlobalOutput, "changes slog's process-wide default logger"},
	"log/slog.SetLogLoggerLevel": {RuleGlobalOutput, "changes the process-wide log level"},
	"fmt.Print":                  {RuleGlobalOutput, "writes to the process's standard output; use World.Log"},
	"fmt.Printf":                 {RuleGlobalOutput, "writes to the process's standard output; use World.Log"},
	"fmt.Println":                {RuleGlobalOutput, "writes to the process's standard output; use World.Log"},

	"maps.Keys":                {RuleMapOrder, mapIteratorReason},
	"maps.Values":              {RuleMapOrder, mapIteratorReason},
	"maps.All":                 {RuleMapOrder, mapIteratorReason},
	"(reflect.Value).MapKeys":  {RuleMapOrder, "returns the keys in random map order"},
	"(reflect.Value).MapRange": {RuleMapOrder, "iterates in random map order"},
}

const mapIteratorReason = "iterates in random map order; wrap it in slices.Sorted, " +
	"or say why order cannot matter with an \"order-independent: <reason>\" comment"

// globalOutputBuiltins are the builtins that write to standard error.
var globalOutputBuiltins = map[string]bool{"print": true, "println": true}

// checkUse reports an identifier that refers to something core may not use.
func (c *fileChecker) checkUse(identifier *ast.Ident, stack []ast.Node) {
	used := c.info.Uses[identifier]
	if used == nil {
		return
	}
	if builtin, isBuiltin := used.(*types.Builtin); isBuiltin {
		if globalOutputBuiltins[builtin.Name()] {
			c.report(identifier.Pos(), RuleGlobalOutput,
				builtin.Name()+" writes to the process's standard error; use World.Log")
		}
		return
	}
	name := qualifiedName(used)
	if name == "" {
		return
	}
	found, banned := forbiddenObjects[name]
	if !banned && isLogFunction(used) {
		found, banned = ban{RuleGlobalOutput, "writes through package log's process-wide logger; use World.Log"}, true
	}
	if !banned {
		return
	}
	if found.rule == RuleMapOrder {
		if c.insideSorted(identifier, stack) {
			return
		}
		if c.excusedByOrderNote(identifier.Pos(), name) {
			return
		}
	}
	c.report(identifier.Pos(), found.rule, name+" "+found.reason)
}

// qualifiedName names a package-level function or variable, or a method,
// the way forbiddenObjects keys them; it is "" for anything else (locals,
// fields, types, constants).
func qualifiedName(object types.Object) string {
	if object.Pkg() == nil {
		return ""
	}
	switch object := object.(type) {
	case *types.Func:
		return object.Origin().FullName()
	case *types.Var:
		if object.Pkg().Scope().Lookup(object.Name()) == object {
			return object.Pkg().Path() + "." + object.Name()
		}
	}
	return ""
}

// isLogFunction reports whether object is one of package log's
// package-level functions (Printf, Fatal, SetOutput, New, ...). Its types,
// such as *log.Logger in a signature, stay allowed.
func isLogFunction(object types.Object) bool {
	function, isFunction := object.(*types.Func)
	if !isFunction || function.Pkg().Path() != "log" {
		return false
	}
	signature, isSignature := function.Type().(*types.Signature)
	return isSignature && signature.Recv() == nil
}

// insideSorted reports whether identifier names a map iterator
// (maps.Keys(m)) that is called directly as the argument of slices.Sorted,
// slices.SortedFunc or slices.SortedStableFunc, the idiom that fixes the
// order before anything sees it.
func (c *fileChecker) insideSorted(identifier *ast.Ident, stack []ast.Node) bool {
	var expression ast.Expr = identifier
	parent := len(stack) - 1
	if parent >= 0 {
		if selector, isSelector := stack[parent].(*ast.SelectorExpr); isSelector && selector.Sel == identifier {
			expression = selector
			parent--
		}
	}
	if parent < 1 {
		return false
	}
	iteratorCall, isCall := stack[parent].(*ast.CallExpr)
	if !isCall || iteratorCall.Fun != expression {
		return false
	}
	sortingCall, isCall := stack[parent-1].(*ast.CallExpr)
	if !isCall || len(sortingCall.Args) == 0 || sortingCall.Args[0] != iteratorCall {
		return false
	}
	callee := c.calledFunction(sortingCall)
	return callee != nil && callee.Pkg().Path() == "slices" && strings.HasPrefix(callee.Name(), "Sorted")
}

// calledFunction is the package-level function or method a call invokes
// (its generic origin for an instantiation), or nil for a builtin, a
// conversion or a call of a function value.
func (c *fileChecker) calledFunction(call *ast.CallExpr) *types.Func {
	var name *ast.Ident
	switch function := ast.Unparen(call.Fun).(type) {
	case *ast.Ident:
		name = function
	case *ast.SelectorExpr:
		name = function.Sel
	case *ast.IndexExpr: // explicit instantiation: slices.Sort[[]string](keys)
		return c.calledFunction(&ast.CallExpr{Fun: function.X})
	case *ast.IndexListExpr:
		return c.calledFunction(&ast.CallExpr{Fun: function.X})
	default:
		return nil
	}
	function, isFunction := c.info.Uses[name].(*types.Func)
	if !isFunction || function.Pkg() == nil {
		return nil
	}
	return function.Origin()
}
