package checker

import (
	"fmt"
	"math"
	"slices"
	"testing"

	"pgregory.net/rapid"

	"sluice/jepsen/history"
)

// TestLogModelAgreesWithBruteForce checks the log linearizability checker,
// with its shortcuts (info appends pinned to where polls saw them,
// unobserved ones counted rather than placed, only as many kept as there
// are gaps), against a search over every order of the operations with the
// plain model: random small histories, right or wrong, must get the same
// verdict from both.
func TestLogModelAgreesWithBruteForce(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		ops := randomSmallHistory(t)
		want := bruteForceLinearizable(ops)
		report := CheckLogLinearizability(ops, Options{})
		if report.Error != "" {
			t.Fatalf("generated a malformed history: %s", report.Error)
		}
		if got := report.Verdict == Pass; got != want {
			t.Fatalf("checker says linearizable=%v, brute force says %v:\n%s\n%s", got, want, report, dump(ops))
		}
	})
}

// randomSmallHistory interleaves up to six sends and polls of one
// partition, with offsets and values drawn from small ranges so that
// right and wrong histories both come up often.
func randomSmallHistory(t *rapid.T) []history.Op {
	var now int64
	recorder := history.NewRecorder(func() int64 {
		now++
		return now
	})
	count := rapid.IntRange(1, 6).Draw(t, "operations")
	type planned struct {
		send    bool
		pending *history.Pending
		done    bool
	}
	plans := make([]planned, count)
	offset := func(label string) int64 { return int64(rapid.IntRange(-1, 3).Draw(t, label)) }
	value := func(label string) string { return fmt.Sprintf("v%d", rapid.IntRange(0, count).Draw(t, label)) }
	for steps := 0; steps < 2*count; steps++ {
		i := rapid.IntRange(0, count-1).Draw(t, "next")
		plan := &plans[i]
		switch {
		case plan.done:
			continue
		case plan.pending == nil:
			plan.send = rapid.Bool().Draw(t, "send")
			payload := history.Payload{}
			if plan.send {
				payload.Sends = []history.Send{{Partition: t0, Value: fmt.Sprintf("v%d", i), Offset: history.OffsetUnknown}}
			}
			f := history.FuncPoll
			if plan.send {
				f = history.FuncSend
			}
			pending, err := recorder.Invoke(i, f, payload)
			if err != nil {
				t.Fatal(err)
			}
			plan.pending = pending
		case plan.send:
			switch rapid.IntRange(0, 3).Draw(t, "outcome") {
			case 0:
				plan.pending.Info("timed out")
			case 1:
				plan.pending.Fail("refused")
			default:
				sent := plan.pending.Invocation().Sends[0]
				sent.Offset = offset("acknowledged")
				plan.pending.OK(history.Payload{Sends: []history.Send{sent}})
			}
			plan.done = true
		default:
			var received []history.Record
			for range rapid.IntRange(0, 2).Draw(t, "records") {
				at := offset("record")
				if at >= 0 {
					received = append(received, history.Record{Offset: at, Value: value("value")})
				}
			}
			plan.pending.OK(history.Payload{Polls: []history.Poll{{Partition: t0, From: offset("from"), Records: received}}})
			plan.done = true
		}
	}
	return recorder.History()
}

// bruteForceLinearizable tries every order of the operations that respects
// real time against a log kept as a plain slice: ok sends append at their
// acknowledged offset, sends of unknown outcome append anywhere (placed
// last, they change nothing, which is how "never" is expressed), failed
// sends are left out, polls read as the log model says.
func bruteForceLinearizable(ops []history.Op) bool {
	operations, err := history.Operations(ops)
	if err != nil {
		panic(err)
	}
	type step struct {
		call, ret int64
		apply     func(log []string) ([]string, bool)
	}
	var steps []step
	for _, operation := range operations {
		invoke := ops[operation.Invoke]
		ret := int64(math.MaxInt64)
		if operation.Type == history.OK {
			ret = ops[operation.Complete].Time
		}
		switch {
		case operation.F == history.FuncSend && operation.Type != history.Fail:
			value, offset := invoke.Sends[0].Value, history.OffsetUnknown
			if operation.Type == history.OK {
				offset = ops[operation.Complete].Sends[0].Offset
			}
			steps = append(steps, step{invoke.Time, ret, func(log []string) ([]string, bool) {
				if offset != history.OffsetUnknown && offset != int64(len(log)) {
					return log, false
				}
				return append(slices.Clone(log), value), true
			}})
		case operation.F == history.FuncPoll && operation.Type == history.OK:
			poll := ops[operation.Complete].Polls[0]
			if len(poll.Records) == 0 && poll.From == history.OffsetUnknown {
				continue
			}
			steps = append(steps, step{invoke.Time, ret, func(log []string) ([]string, bool) {
				if len(poll.Records) == 0 {
					return log, int64(len(log)) <= poll.From
				}
				for _, record := range poll.Records {
					if record.Offset >= int64(len(log)) || log[record.Offset] != record.Value {
						return log, false
					}
				}
				return log, true
			}})
		}
	}
	done := make([]bool, len(steps))
	var search func(log []string, remaining int) bool
	search = func(log []string, remaining int) bool {
		if remaining == 0 {
			return true
		}
		for i, candidate := range steps {
			if done[i] {
				continue
			}
			// Another remaining operation that returned before this one
			// was invoked must come first.
			blocked := false
			for j, other := range steps {
				if !done[j] && j != i && other.ret < candidate.call {
					blocked = true
					break
				}
			}
			if blocked {
				continue
			}
			next, ok := candidate.apply(log)
			if !ok {
				continue
			}
			done[i] = true
			found := search(next, remaining-1)
			done[i] = false
			if found {
				return true
			}
		}
		return false
	}
	return search(nil, len(steps))
}

// TestEagerLogOperationsOnlyHelp checks the premise of the searches'
// eager shortcut (eagerInput) on the log model itself: an unobserved
// append or a deleted copy never fails, and every sequence of operations
// the model accepts after a state it also accepts after that state with
// the eager one applied first. A new kind of operation, or a change to
// how gaps are filled, that broke this would make the searches miss
// linearizations.
func TestEagerLogOperationsOnlyHelp(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		model := logModel(rapid.Int64Range(0, 4).Draw(t, "deleted below"))
		value := func(label string) string { return fmt.Sprintf("v%d", rapid.IntRange(0, 3).Draw(t, label)) }
		operation := func(label string) *logInput {
			switch rapid.IntRange(0, 4).Draw(t, label) {
			case 0:
				return &logInput{kind: appendValue, value: value(label + " value"), offset: rapid.Int64Range(-1, 5).Draw(t, label+" offset")}
			case 1:
				var records []history.Record
				for i := range rapid.IntRange(1, 2).Draw(t, label+" records") {
					records = append(records, history.Record{Offset: rapid.Int64Range(0, 5).Draw(t, fmt.Sprintf("%s offset %d", label, i)), Value: value(fmt.Sprintf("%s value %d", label, i))})
				}
				return &logInput{kind: readRecords, records: descending(records)}
			case 2:
				return &logInput{kind: readNothing, from: rapid.Int64Range(0, 5).Draw(t, label+" from")}
			case 3:
				return &logInput{kind: appendUnobserved, value: value(label + " value"), offset: history.OffsetUnknown}
			default:
				return &logInput{kind: appendDeletedCopy, value: value(label + " value"), offset: history.OffsetUnknown}
			}
		}
		state := model.Init()
		for i := range rapid.IntRange(0, 6).Draw(t, "before") {
			if ok, after := model.Step(state, operation(fmt.Sprintf("before %d", i)), nil); ok {
				state = after
			}
		}
		eager := &logInput{kind: appendUnobserved, offset: history.OffsetUnknown}
		if rapid.Bool().Draw(t, "a deleted copy") {
			eager.kind = appendDeletedCopy
		}
		if !eager.eager() {
			t.Fatalf("%v is not eager", eager.kind)
		}
		ok, helped := model.Step(state, eager, nil)
		if !ok {
			t.Fatalf("the eager %s failed in state %s", model.DescribeOperation(eager, nil), model.DescribeState(state))
		}
		for i := range rapid.IntRange(1, 6).Draw(t, "after") {
			next := operation(fmt.Sprintf("after %d", i))
			ok, after := model.Step(state, next, nil)
			if !ok {
				return // the claim is about what state accepts
			}
			okHelped, afterHelped := model.Step(helped, next, nil)
			if !okHelped {
				t.Fatalf("%s fits %s but not, with the eager operation first, %s",
					model.DescribeOperation(next, nil), model.DescribeState(state), model.DescribeState(helped))
			}
			state, helped = after, afterHelped
		}
	})
}
