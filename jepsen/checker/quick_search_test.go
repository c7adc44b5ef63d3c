package checker

import (
	"fmt"
	"testing"

	"github.com/anishathalye/porcupine"
	"pgregory.net/rapid"

	"sluice/jepsen/history"
)

// TestQuickSearchAgreesWithPorcupine checks linearizes and decide against
// porcupine on random small searches of both models: given steps enough
// to search everything, each finds a linearization exactly when
// porcupine says there is one, and decide says Illegal otherwise. (With
// its budget the quick search may give up sooner; decide then decides.)
func TestQuickSearchAgreesWithPorcupine(t *testing.T) {
	const everything = 1 << 24
	t.Run("log", func(t *testing.T) {
		rapid.Check(t, func(t *rapid.T) {
			ops := randomSmallHistory(t)
			a, err := newAnalysis(ops, Options{})
			if err != nil {
				t.Fatalf("generated a malformed history: %v", err)
			}
			for _, tp := range a.partitions {
				searchesAgreeWithPorcupine(t, a.logSearch(tp), everything, ops)
			}
		})
	})
	// Retries' deleted copies are eager operations, as unobserved
	// appends are, and many of them: the search that offers them must
	// still find a linearization exactly when one exists.
	t.Run("log with deleted copies", func(t *testing.T) {
		rapid.Check(t, func(t *rapid.T) {
			ops := randomSmallHistory(t)
			deletedBelow := rapid.Int64Range(0, 4).Draw(t, "deleted below")
			a, err := newAnalysis(ops, Options{Deleted: []DeletedBelow{{Partition: t0, Offset: deletedBelow}}})
			if err != nil {
				t.Fatalf("generated a malformed history: %v", err)
			}
			for _, tp := range a.partitions {
				searchesAgreeWithPorcupine(t, a.logSearchWithDeletedCopies(tp), everything, ops)
			}
		})
	})
	t.Run("register", func(t *testing.T) {
		rapid.Check(t, func(t *rapid.T) {
			s := &search{model: committedOffsetModel}
			for i := range rapid.IntRange(1, 9).Draw(t, "operations") {
				call := rapid.Int64Range(0, 10).Draw(t, fmt.Sprintf("call %d", i))
				ret := call + rapid.Int64Range(0, 6).Draw(t, fmt.Sprintf("length %d", i))
				switch rapid.IntRange(0, 2).Draw(t, fmt.Sprintf("kind %d", i)) {
				case 0:
					offset := rapid.Int64Range(1, 3).Draw(t, fmt.Sprintf("offset %d", i))
					s.addOperation(i, call, ret, &registerInput{write: true, offset: offset}, int64(0))
				case 1:
					offset := rapid.Int64Range(1, 3).Draw(t, fmt.Sprintf("offset %d", i))
					s.addOperation(i, call, returnTimeUnknown, &registerInput{write: true, offset: offset}, int64(0))
				default:
					read := rapid.Int64Range(-1, 3).Draw(t, fmt.Sprintf("read %d", i))
					s.addOperation(i, call, ret, &registerInput{}, read)
				}
			}
			searchesAgreeWithPorcupine(t, s, everything, nil)
		})
	})
}

// searchesAgreeWithPorcupine fails t unless the quick and the deciding
// search, given steps, say what porcupine says of s (ops, when not nil,
// is the history s came from, for the message).
func searchesAgreeWithPorcupine(t *rapid.T, s *search, steps int, ops []history.Op) {
	want := porcupine.CheckOperations(s.model, s.operations)
	what := fmt.Sprintf("%+v", s.operations)
	if ops != nil {
		what = dump(ops)
	}
	if got := s.linearizesWithin(steps); got != want {
		t.Fatalf("quick search says linearizable=%v, porcupine %v:\n%s", got, want, what)
	}
	if got := s.decide(budgetOf(steps)).result; got != verdictOf(want) {
		t.Fatalf("deciding search says %s, porcupine linearizable=%v:\n%s", got, want, what)
	}
}

// verdictOf is the deciding search's verdict for porcupine's answer.
func verdictOf(linearizable bool) porcupine.CheckResult {
	if linearizable {
		return porcupine.Ok
	}
	return porcupine.Illegal
}
