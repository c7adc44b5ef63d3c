package checker

import "testing"

func TestReportViolationNamesTheFirstFailureInOrder(t *testing.T) {
	failure := func(detail string) Finding { return Finding{Status: Failure, Ops: []int{1}, Detail: detail} }
	failing := Report{Verdict: Fail, Classes: []Class{
		{Anomaly: NonlinearizableLog, Failures: 1, Examples: []Finding{failure("no order")}},
		{Anomaly: Duplicate, Failures: 5, Examples: []Finding{
			failure("a"), {Status: Permitted, Detail: "allowed"}, failure("b"), failure("c"), failure("d"),
		}},
	}}
	cases := []struct {
		name          string
		report        Report
		check, detail string
		failed        bool
	}{
		{"pass", Report{Verdict: Pass, Valid: true}, "", "", false},
		{"unreadable history", Report{Verdict: Fail, Error: "op 3 completes nothing"}, "history", "op 3 completes nothing", true},
		{"earliest class in order, three failing examples", failing, "duplicate", "5 failures; failure ops=[1]: a; failure ops=[1]: b; failure ops=[1]: c", true},
		{"search out of budget", Report{Verdict: Unknown, Inconclusive: []Inconclusive{{Anomaly: NonlinearizableLog, Detail: "budget"}}}, "inconclusive", "nonlinearizable-log -0: budget", true},
		{"invalid with no failing class", Report{Verdict: Fail}, "checker", "verdict=fail ops=0", true},
	}
	for _, c := range cases {
		check, detail, failed := c.report.Violation()
		if check != c.check || detail != c.detail || failed != c.failed {
			t.Errorf("%s: Violation() = %q, %q, %v; want %q, %q, %v", c.name, check, detail, failed, c.check, c.detail, c.failed)
		}
	}
}
