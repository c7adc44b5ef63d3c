package report

import (
	"fmt"
	"html"
	"io"
	"strings"

	"sluice/jepsen/history"
)

// operationRowsMax bounds the table: a run records a few thousand ops;
// past this the page would be too slow to filter, and the rest are
// counted instead.
const operationRowsMax = 20_000

// describeValuesMax bounds the values one cell lists.
const describeValuesMax = 8

// writeOperations writes the history as a table, one op a row; the ops the
// failing finding names get the "culprit" class, and the filter box above
// (a few lines of inline script) hides rows that do not contain its text.
func writeOperations(w io.Writer, ops []history.Op, marked map[int]bool) {
	fmt.Fprintln(w, `<p><input id="filter" type="search" placeholder="filter: a value, a partition (orders-1), a process, send/poll/commit, ok/fail/info" size="70" oninput="filterOps()"> <label><input id="only-culprit" type="checkbox" onchange="filterOps()"> only the failing finding's operations</label> <span id="shown"></span></p>`)
	fmt.Fprintln(w, `<table id="ops"><thead><tr><th>#</th><th>time</th><th>process</th><th>type</th><th>f</th><th>what</th><th>error</th></tr></thead><tbody>`)
	for i, op := range ops {
		if i >= operationRowsMax {
			break
		}
		class := op.Type.String()
		if marked[op.Index] {
			class += " culprit"
		}
		fmt.Fprintf(w, `<tr class="%s"><td>%d</td><td>%s</td><td>%d</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td></tr>`+"\n",
			html.EscapeString(class), op.Index, seconds(durationOf(op.Time)), op.Process, html.EscapeString(op.Type.String()),
			html.EscapeString(op.F.String()), html.EscapeString(describe(op.Payload)), html.EscapeString(op.Error))
	}
	fmt.Fprintln(w, `</tbody></table>`)
	if len(ops) > operationRowsMax {
		fmt.Fprintf(w, "<p>%d more operations not shown (the table stops at %d).</p>\n", len(ops)-operationRowsMax, operationRowsMax)
	}
}

// describe says what an op carries in one line: "orders-1 p1-7@12",
// "orders-0 from 3: p2-1@3 p1-4@4", "g1 orders-2=17 (gen 3)".
func describe(p history.Payload) string {
	var parts []string
	for _, s := range p.Sends {
		text := fmt.Sprintf("%s %s", s.Partition, s.Value)
		if s.Offset != history.OffsetUnknown {
			text += fmt.Sprintf("@%d", s.Offset)
		}
		parts = append(parts, text)
	}
	for _, poll := range p.Polls {
		var values []string
		for i, r := range poll.Records {
			if i == describeValuesMax {
				values = append(values, fmt.Sprintf("... %d more", len(poll.Records)-i))
				break
			}
			values = append(values, fmt.Sprintf("%s@%d", r.Value, r.Offset))
		}
		from := "?"
		if poll.From != history.OffsetUnknown {
			from = fmt.Sprint(poll.From)
		}
		parts = append(parts, fmt.Sprintf("%s from %s: %s", poll.Partition, from, strings.Join(values, " ")))
	}
	for _, c := range p.Commits {
		text := fmt.Sprintf("%s %s=%d", c.Group, c.Partition, c.Offset)
		if c.Generation != 0 {
			text += fmt.Sprintf(" (gen %d)", c.Generation)
		}
		parts = append(parts, text)
	}
	for _, s := range p.Seeks {
		parts = append(parts, fmt.Sprintf("seek %s to %d", s.Partition, s.Offset))
	}
	if p.Group != "" && len(p.Commits) == 0 {
		parts = append(parts, fmt.Sprintf("group %s member %s gen %d", p.Group, p.MemberID, p.Generation))
	}
	if len(p.Topics) > 0 {
		parts = append(parts, "topics "+strings.Join(p.Topics, ","))
	}
	if len(p.Assigned) > 0 {
		var assigned []string
		for _, tp := range p.Assigned {
			assigned = append(assigned, tp.String())
		}
		parts = append(parts, "assigned "+strings.Join(assigned, ","))
	}
	return strings.Join(parts, "; ")
}

// filterScript filters the operations table; inline, so the page needs
// nothing from a network.
const filterScript = `
function filterOps() {
  var text = document.getElementById('filter').value.toLowerCase();
  var only = document.getElementById('only-culprit').checked;
  var rows = document.querySelectorAll('#ops tbody tr');
  var shown = 0;
  for (var i = 0; i < rows.length; i++) {
    var r = rows[i];
    var ok = (!only || r.classList.contains('culprit')) && (text === '' || r.textContent.toLowerCase().indexOf(text) >= 0);
    r.style.display = ok ? '' : 'none';
    if (ok) shown++;
  }
  document.getElementById('shown').textContent = shown + ' of ' + rows.length + ' shown';
}
`
