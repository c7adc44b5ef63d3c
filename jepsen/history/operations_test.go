package history

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestOperationsPairsInvokesWithCompletions(t *testing.T) {
	ops := sampleHistory()
	// A poll still running when the history ends.
	ops = append(ops, Op{Index: 8, Process: 2, Type: Invoke, F: FuncPoll, Time: 31})
	got, err := Operations(ops)
	if err != nil {
		t.Fatal(err)
	}
	want := []Operation{
		{Process: 0, F: FuncSend, Type: OK, Invoke: 0, Complete: 1},
		{Process: 1, F: FuncSubscribe, Type: OK, Invoke: 2, Complete: 3},
		{Process: 1, F: FuncPoll, Type: OK, Invoke: 4, Complete: 5},
		{Process: 1, F: FuncCommit, Type: Info, Invoke: 6, Complete: 7},
		{Process: 2, F: FuncPoll, Type: Info, Invoke: 8, Complete: NoCompletion},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("operations (-want +got):\n%s", diff)
	}
}

func TestValidateRejectsMalformedHistories(t *testing.T) {
	tp := TopicPartition{Topic: "t", Partition: 0}
	invokeSend := func(index, process int, value string) Op {
		return Op{Index: index, Process: process, Type: Invoke, F: FuncSend, Time: int64(index),
			Payload: Payload{Sends: []Send{{Partition: tp, Value: value, Offset: OffsetUnknown}}}}
	}
	okSend := func(index, process int, value string, offset int64) Op {
		return Op{Index: index, Process: process, Type: OK, F: FuncSend, Time: int64(index),
			Payload: Payload{Sends: []Send{{Partition: tp, Value: value, Offset: offset}}}}
	}
	invokePoll := func(index, process int) Op {
		return Op{Index: index, Process: process, Type: Invoke, F: FuncPoll, Time: int64(index)}
	}
	for _, test := range []struct {
		name string
		ops  []Op
		want string
	}{
		{"index off", []Op{{Index: 1, Type: Invoke, F: FuncPoll}}, "has index 1"},
		{"time goes back", []Op{invokePoll(0, 0), {Index: 1, Process: 0, Type: OK, F: FuncPoll, Time: -1}}, "negative time"},
		{"time earlier", []Op{{Index: 0, Type: Invoke, F: FuncPoll, Time: 5}, {Index: 1, Type: OK, F: FuncPoll, Time: 4}}, "before the previous"},
		{"completion without invoke", []Op{{Index: 0, Process: 1, Type: OK, F: FuncPoll}}, "running nothing"},
		{"completion of another function", []Op{invokePoll(0, 1), {Index: 1, Process: 1, Type: OK, F: FuncAssign, Time: 1}}, "completes assign"},
		{"two at once", []Op{invokePoll(0, 1), invokePoll(1, 1)}, "still running"},
		{"run after info", []Op{invokePoll(0, 1), {Index: 1, Process: 1, Type: Info, F: FuncPoll, Time: 1}, invokePoll(2, 1)}, "retired"},
		{"value sent twice", []Op{invokeSend(0, 1, "a"), invokeSend(1, 2, "a")}, "already sent"},
		{"empty value", []Op{invokeSend(0, 1, "")}, "empty"},
		{"invoke with offset", []Op{{Index: 0, Process: 1, Type: Invoke, F: FuncSend,
			Payload: Payload{Sends: []Send{{Partition: tp, Value: "a", Offset: 3}}}}}, "already has offset 3"},
		{"ack of another value", []Op{invokeSend(0, 1, "a"), okSend(1, 1, "b", 0)}, "acknowledges \"b\""},
		{"ack of fewer values", []Op{invokeSend(0, 1, "a"), {Index: 1, Process: 1, Type: OK, F: FuncSend, Time: 1, Payload: Payload{Sends: []Send{}}}}, "at least one"},
		{"polls on a send", []Op{invokeSend(0, 1, "a"), {Index: 1, Process: 1, Type: OK, F: FuncSend, Time: 1,
			Payload: Payload{Sends: []Send{{Partition: tp, Value: "a"}}, Polls: []Poll{{Partition: tp}}}}}, "polls belong"},
		{"payload on a fail", []Op{invokeSend(0, 1, "a"), {Index: 1, Process: 1, Type: Fail, F: FuncSend, Time: 1,
			Payload: Payload{Sends: []Send{{Partition: tp, Value: "a"}}}}}, "carries no results"},
		{"record without offset", []Op{invokePoll(0, 1), {Index: 1, Process: 1, Type: OK, F: FuncPoll, Time: 1,
			Payload: Payload{Polls: []Poll{{Partition: tp, From: 0, Records: []Record{{Offset: -1, Value: "a"}}}}}}}, "at offset -1"},
		{"commit without offset", []Op{{Index: 0, Process: 1, Type: Invoke, F: FuncCommit,
			Payload: Payload{Commits: []Commit{{Group: "g", Partition: tp, Offset: OffsetUnknown}}}}}, "without an offset"},
		{"group on a poll", []Op{{Index: 0, Process: 1, Type: Invoke, F: FuncPoll, Payload: Payload{Group: "g"}}}, "belong to subscribe"},
	} {
		err := Validate(test.ops)
		if err == nil {
			t.Errorf("%s: validated", test.name)
			continue
		}
		if !strings.Contains(err.Error(), test.want) {
			t.Errorf("%s: error %q does not mention %q", test.name, err, test.want)
		}
	}
}
