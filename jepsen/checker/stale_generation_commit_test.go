package checker

import (
	"strings"
	"testing"

	"sluice/jepsen/history"
)

func TestStaleGenerationCommit(t *testing.T) {
	subscribe := func(s *script, process int, member string, generation int32, assigned ...history.TopicPartition) int {
		return s.operation(process, history.FuncSubscribe, history.Payload{Topics: []string{"t"}},
			history.Payload{Group: "g", MemberID: member, Generation: generation, Assigned: assigned})
	}
	commitOf := func(offset int64, generation int32) history.Payload {
		return history.Payload{Commits: []history.Commit{{Group: "g", Partition: t0, Offset: offset, Generation: generation}}}
	}
	t.Run("commits of the newest generation pass", func(t *testing.T) {
		s := newScript(t)
		subscribe(s, 1, "m1", 1, t0)
		s.operation(1, history.FuncCommit, commitOf(3, 1), history.Payload{})
		subscribe(s, 2, "m2", 2, t0)
		s.operation(2, history.FuncCommit, commitOf(5, 2), history.Payload{})
		wantFindings(t, CheckStaleGenerationCommits(s.ops(), Options{}), StaleGenerationCommit, Failure)
	})
	t.Run("a commit invoked before the newer generation completed passes", func(t *testing.T) {
		s := newScript(t)
		subscribe(s, 1, "m1", 1, t0)
		zombie := s.invoke(1, history.FuncCommit, commitOf(3, 1))
		subscribe(s, 2, "m2", 2, t0)
		zombie.OK(history.Payload{}) // concurrent with the rebalance: the coordinator may have taken it first
		wantFindings(t, CheckStaleGenerationCommits(s.ops(), Options{}), StaleGenerationCommit, Failure)
	})
	t.Run("refused and unknown stale commits pass", func(t *testing.T) {
		s := newScript(t)
		subscribe(s, 1, "m1", 1, t0)
		subscribe(s, 2, "m2", 2, t0)
		s.invoke(1, history.FuncCommit, commitOf(3, 1)).Fail("ILLEGAL_GENERATION")
		s.invoke(1, history.FuncCommit, commitOf(3, 1)).Info("timed out")
		wantFindings(t, CheckStaleGenerationCommits(s.ops(), Options{}), StaleGenerationCommit, Failure)
	})
	t.Run("a zombie's commit acknowledged after the group moved on", func(t *testing.T) {
		s := newScript(t)
		subscribe(s, 1, "m1", 1, t0)
		moved := subscribe(s, 2, "m2", 2, t0)
		subscribe(s, 2, "m2", 3, t0)
		zombie := s.operation(1, history.FuncCommit, commitOf(3, 1), history.Payload{})
		other := s.operation(3, history.FuncCommit, history.Payload{Commits: []history.Commit{{Group: "other", Partition: t0, Offset: 1, Generation: 1}}}, history.Payload{})
		report := CheckStaleGenerationCommits(s.ops(), Options{})
		wantFindings(t, report, StaleGenerationCommit, Failure, []int{moved, zombie})
		class, _ := report.Class(StaleGenerationCommit)
		finding := class.Examples[0]
		if finding.Group != "g" || finding.Partition != t0 || !strings.Contains(finding.Detail, "generation 1") || !strings.Contains(finding.Detail, "generation 2") {
			t.Fatalf("finding %s, want it to name group g, partition t-0 and both generations", finding)
		}
		_ = other // another group's generations are its own
	})
	t.Run("commits without a generation are not judged", func(t *testing.T) {
		s := newScript(t)
		subscribe(s, 1, "m1", 4, t0)
		s.operation(2, history.FuncCommit, commitOf(3, 0), history.Payload{})
		wantFindings(t, CheckStaleGenerationCommits(s.ops(), Options{}), StaleGenerationCommit, Failure)
	})
}
