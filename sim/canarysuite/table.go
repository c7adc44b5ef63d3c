package canarysuite

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"
)

// Table writes the measurements as an aligned table, one canary a row:
//
//	canary  workload  median  worst  bound  time to catch  caught by  status
//
// worst reads ">N" for a canary some starting point never caught in its
// bound N. The time to catch is the median wall time one core spent on the
// seeds up to the first failure: the same measure in the units a sweep is
// paid in, and unlike the seed counts it varies with the machine.
func Table(w io.Writer, measurements []Measurement, starts int) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "canary\tworkload\tseeds to first failure (median)\tworst of %d starts\tbound\ttime to catch (median, one core)\tcaught by\tstatus\n", starts)
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
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%s\t%s\t%s\n", m.Canary.Name, m.Canary.Workload, median, worst, m.Canary.SeedsMax, roundElapsed(m.MedianElapsed()), checks, status)
	}
	return tw.Flush()
}

// roundElapsed keeps about two significant figures: 4ms, 310ms, 2.4s, 41s.
func roundElapsed(d time.Duration) time.Duration {
	switch {
	case d >= 10*time.Second:
		return d.Round(time.Second)
	case d >= time.Second:
		return d.Round(100 * time.Millisecond)
	case d >= 100*time.Millisecond:
		return d.Round(10 * time.Millisecond)
	}
	return d.Round(time.Millisecond)
}
