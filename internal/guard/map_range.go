package guard

import (
	"go/ast"
	"go/token"
	"go/types"
)

// sortFunctions are the functions that sort their first argument in place,
// keyed by package path and then name.
var sortFunctions = map[string]map[string]bool{
	"sort": {
		"Sort": true, "Stable": true, "Slice": true, "SliceStable": true,
		"Strings": true, "Ints": true, "Float64s": true,
	},
	"slices": {"Sort": true, "SortFunc": true, "SortStableFunc": true},
}

// checkRange reports a range over a map: Go randomizes the order on every
// run, so anything the loop does in that order would differ between two
// runs of the same seed. Two loops are allowed: the collect-then-sort idiom,
// and a loop carrying an "order-independent: <reason>" comment.
func (c *fileChecker) checkRange(loop *ast.RangeStmt, stack []ast.Node) {
	ranged := c.info.TypeOf(loop.X)
	if ranged == nil || !isMap(ranged) {
		return
	}
	if c.collectsKeysThenSorts(loop, stack) {
		return
	}
	subject := "range over " + types.TypeString(ranged, types.RelativeTo(nil))
	if c.excusedByOrderNote(loop.For, subject) {
		return
	}
	c.report(loop.For, RuleMapOrder, subject+" iterates in random order; "+
		"append the keys to a slice and sort it, or say why order cannot matter "+
		"with an \"order-independent: <reason>\" comment")
}

// isMap reports whether ranging over a value of type t iterates a map:
// t's underlying type is a map, or t is a type parameter whose constraint
// admits a map (the compiler then requires every type it admits to be one).
func isMap(t types.Type) bool {
	t = types.Unalias(t)
	if parameter, isParameter := t.(*types.TypeParam); isParameter {
		return constraintAdmitsMap(parameter.Constraint())
	}
	_, isMapType := t.Underlying().(*types.Map)
	return isMapType
}

// constraintAdmitsMap looks through a constraint's embedded types, unions
// and nested constraint interfaces for a map type.
func constraintAdmitsMap(constraint types.Type) bool {
	constraintInterface, isInterface := constraint.Underlying().(*types.Interface)
	if !isInterface {
		return false
	}
	for index := range constraintInterface.NumEmbeddeds() {
		embedded := types.Unalias(constraintInterface.EmbeddedType(index))
		if union, isUnion := embedded.(*types.Union); isUnion {
			for term := range union.Len() {
				if isMap(union.Term(term).Type()) {
					return true
				}
			}
			continue
		}
		if _, isNested := embedded.Underlying().(*types.Interface); isNested {
			if constraintAdmitsMap(embedded) {
				return true
			}
			continue
		}
		if isMap(embedded) {
			return true
		}
	}
	return false
}

// collectsKeysThenSorts recognizes the idiom that makes map order harmless:
//
//	for key := range m {
//		keys = append(keys, key)
//	}
//	sort.Strings(keys) // or any sort.* / slices.Sort* of keys
//
// The loop body must be that single append of the key (no value is bound,
// so nothing else can observe the order), and a sort of the same slice must
// follow the loop in the same function, not inside a nested function literal.
func (c *fileChecker) collectsKeysThenSorts(loop *ast.RangeStmt, stack []ast.Node) bool {
	key, isIdentifier := loop.Key.(*ast.Ident)
	if !isIdentifier || key.Name == "_" {
		return false
	}
	if loop.Value != nil && !isBlank(loop.Value) {
		return false
	}
	if len(loop.Body.List) != 1 {
		return false
	}
	keys := c.sliceAppendedTo(loop.Body.List[0], c.info.ObjectOf(key))
	if keys == nil {
		return false
	}
	body := enclosingFunctionBody(stack)
	if body == nil {
		return false
	}
	return c.sortedAfter(body, keys, loop.End())
}

func isBlank(expression ast.Expr) bool {
	identifier, isIdentifier := expression.(*ast.Ident)
	return isIdentifier && identifier.Name == "_"
}

// sliceAppendedTo returns the slice variable s if statement is exactly
// "s = append(s, key)" for the loop's key, and nil otherwise.
func (c *fileChecker) sliceAppendedTo(statement ast.Stmt, key types.Object) types.Object {
	assignment, isAssignment := statement.(*ast.AssignStmt)
	if !isAssignment || assignment.Tok != token.ASSIGN || len(assignment.Lhs) != 1 || len(assignment.Rhs) != 1 {
		return nil
	}
	target, isIdentifier := assignment.Lhs[0].(*ast.Ident)
	if !isIdentifier {
		return nil
	}
	slice := c.info.ObjectOf(target)
	call, isCall := assignment.Rhs[0].(*ast.CallExpr)
	if slice == nil || !isCall || call.Ellipsis != token.NoPos || len(call.Args) != 2 {
		return nil
	}
	function, isIdentifier := call.Fun.(*ast.Ident)
	if !isIdentifier {
		return nil
	}
	if builtin, isBuiltin := c.info.Uses[function].(*types.Builtin); !isBuiltin || builtin.Name() != "append" {
		return nil
	}
	if !c.refersTo(call.Args[0], slice) || !c.refersTo(call.Args[1], key) {
		return nil
	}
	return slice
}

// refersTo reports whether expression is the variable object, possibly in
// parentheses.
func (c *fileChecker) refersTo(expression ast.Expr, object types.Object) bool {
	identifier, isIdentifier := ast.Unparen(expression).(*ast.Ident)
	return isIdentifier && c.info.ObjectOf(identifier) == object
}

// enclosingFunctionBody is the body of the innermost function declaration
// or literal among the ancestors, or nil at package level.
func enclosingFunctionBody(stack []ast.Node) *ast.BlockStmt {
	for index := len(stack) - 1; index >= 0; index-- {
		switch function := stack[index].(type) {
		case *ast.FuncLit:
			return function.Body
		case *ast.FuncDecl:
			return function.Body
		}
	}
	return nil
}

// sortedAfter reports whether body sorts slice in place somewhere after
// position after, outside nested function literals.
func (c *fileChecker) sortedAfter(body *ast.BlockStmt, slice types.Object, after token.Pos) bool {
	sorted := false
	ast.Inspect(body, func(node ast.Node) bool {
		if sorted {
			return false
		}
		if _, isLiteral := node.(*ast.FuncLit); isLiteral {
			return false
		}
		call, isCall := node.(*ast.CallExpr)
		if isCall && call.Pos() > after && len(call.Args) > 0 &&
			c.sortsInPlace(call) && c.sortedSlice(call.Args[0], slice) {
			sorted = true
		}
		return !sorted
	})
	return sorted
}

// sortsInPlace reports whether call is sort.Strings, sort.Slice, ...,
// slices.Sort or slices.SortFunc, which sort their first argument.
func (c *fileChecker) sortsInPlace(call *ast.CallExpr) bool {
	function := c.calledFunction(call)
	if function == nil || function.Signature().Recv() != nil {
		return false
	}
	return sortFunctions[function.Pkg().Path()][function.Name()]
}

// sortedSlice reports whether argument is slice itself, or slice converted
// to a sort.Interface type (sort.StringSlice(keys), byName(keys)), possibly
// reversed with sort.Reverse.
func (c *fileChecker) sortedSlice(argument ast.Expr, slice types.Object) bool {
	argument = ast.Unparen(argument)
	if c.refersTo(argument, slice) {
		return true
	}
	call, isCall := argument.(*ast.CallExpr)
	if !isCall || len(call.Args) != 1 {
		return false
	}
	if c.info.Types[call.Fun].IsType() {
		return c.sortedSlice(call.Args[0], slice)
	}
	function := c.calledFunction(call)
	if function != nil && function.Pkg().Path() == "sort" && function.Name() == "Reverse" {
		return c.sortedSlice(call.Args[0], slice)
	}
	return false
}
