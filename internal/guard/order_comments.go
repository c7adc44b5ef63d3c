package guard

import (
	"go/ast"
	"go/token"
	"strings"
)

// orderIndependentMarker starts the comment that excuses one map iteration
// from the map-order rule: "// order-independent: sums sizes". The reason
// after the colon is required; it is what a reviewer checks.
const orderIndependentMarker = "order-independent:"

// orderNotes maps a source line to the reason given by an
// order-independent comment that covers it. A comment covers the lines it
// spans (a trailing comment on the loop's own line) and the line just below
// its last line (a comment, possibly several lines long, above the loop).
// A marker with nothing after it maps to "".
type orderNotes map[int]string

func findOrderNotes(fileSet *token.FileSet, file *ast.File) orderNotes {
	notes := orderNotes{}
	for _, group := range file.Comments {
		text := group.Text()
		at := strings.Index(text, orderIndependentMarker)
		if at < 0 {
			continue
		}
		reason := strings.Join(strings.Fields(text[at+len(orderIndependentMarker):]), " ")
		first := fileSet.Position(group.Pos()).Line
		last := fileSet.Position(group.End()).Line
		for line := first; line <= last+1; line++ {
			notes[line] = reason
		}
	}
	return notes
}

// excusedByOrderNote reports whether an order-independent comment with a
// reason covers the line at position at. If the comment is there but gives
// no reason, it says so in a finding, and nothing is excused.
func (c *fileChecker) excusedByOrderNote(at token.Pos, subject string) bool {
	reason, found := c.notes[c.fileSet.Position(at).Line]
	if !found {
		return false
	}
	if reason != "" {
		return true
	}
	c.report(at, RuleMapOrder, subject+": the \""+orderIndependentMarker+
		"\" comment needs a reason after the colon")
	return true
}
