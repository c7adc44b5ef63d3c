package canarysuite

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// Table writes the measurements as an aligned table, one canary a row:
//
//	canary  workload  median  worst  bound  caught by  status
//
// worst reads ">N" for a canary some starting point never caught in its
// bound N.
func Table(w io.Writer, measurements []Measurement, starts int) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "canary\tworkload\tseeds to first failure (median)\tworst of %d starts\tbound\tcaught by\tstatus\n", starts)
	for _, m := range measurements {
		worst := fmt.Sprint(m.Worst())
		status := "ok"
		if m.Escaped() {
			worst = fmt.Sprintf(">%d", m.Canary.SeedsMax)
			status = "ESCAPED"
		}
		median := fmt.Sprint(m.Median())
		if m.Median() > m.Canary.SeedsMax {
			median = fmt.Sprintf(">%d", m.Canary.SeedsMax)
		}
		checks := strings.Join(m.Checks(), ",")
		if checks == "" {
			checks = "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%s\t%s\n", m.Canary.Name, m.Canary.Workload, median, worst, m.Canary.SeedsMax, checks, status)
	}
	return tw.Flush()
}
