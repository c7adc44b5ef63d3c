package history

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// tickingClock returns 10, 20, 30... so every op gets a distinct time.
func tickingClock() func() int64 {
	var now int64
	return func() int64 {
		now += 10
		return now
	}
}

var topic0 = TopicPartition{Topic: "orders", Partition: 0}

func TestRecorderNumbersAndStampsOps(t *testing.T) {
	recorder := NewRecorder(tickingClock())
	send, err := recorder.Invoke(3, FuncSend, Payload{Sends: []Send{{Partition: topic0, Value: "p3-1", Offset: OffsetUnknown}}})
	if err != nil {
		t.Fatal(err)
	}
	poll, err := recorder.Invoke(4, FuncPoll, Payload{})
	if err != nil {
		t.Fatal(err)
	}
	send.OK(Payload{Sends: []Send{{Partition: topic0, Value: "p3-1", Offset: 0}}})
	poll.Fail("not leader")

	want := []Op{
		{Index: 0, Process: 3, Type: Invoke, F: FuncSend, Time: 10,
			Payload: Payload{Sends: []Send{{Partition: topic0, Value: "p3-1", Offset: OffsetUnknown}}}},
		{Index: 1, Process: 4, Type: Invoke, F: FuncPoll, Time: 20},
		{Index: 2, Process: 3, Type: OK, F: FuncSend, Time: 30,
			Payload: Payload{Sends: []Send{{Partition: topic0, Value: "p3-1", Offset: 0}}}},
		{Index: 3, Process: 4, Type: Fail, F: FuncPoll, Time: 40, Error: "not leader"},
	}
	if diff := cmp.Diff(want, recorder.History()); diff != "" {
		t.Fatalf("history (-want +got):\n%s", diff)
	}
	if err := Validate(recorder.History()); err != nil {
		t.Fatalf("recorded history does not validate: %v", err)
	}
}

func TestRecorderKeepsProcessDiscipline(t *testing.T) {
	recorder := NewRecorder(tickingClock())
	poll, err := recorder.Invoke(1, FuncPoll, Payload{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := recorder.Invoke(1, FuncPoll, Payload{}); err == nil || !strings.Contains(err.Error(), "still running op 0") {
		t.Fatalf("second invoke on a busy process: got %v", err)
	}
	poll.Info("timed out")
	if _, err := recorder.Invoke(1, FuncPoll, Payload{}); err == nil || !strings.Contains(err.Error(), "retired") {
		t.Fatalf("invoke on a retired process: got %v", err)
	}
	if _, err := recorder.Invoke(-1, FuncPoll, Payload{}); err == nil {
		t.Fatal("negative process accepted")
	}
	if _, err := recorder.Invoke(2, Func(0), Payload{}); err == nil {
		t.Fatal("unknown function accepted")
	}
	if recorder.Len() != 2 {
		t.Fatalf("refused invokes were recorded: %d ops", recorder.Len())
	}
}

func TestRecorderPanicsOnDoubleCompletion(t *testing.T) {
	recorder := NewRecorder(tickingClock())
	poll, err := recorder.Invoke(1, FuncPoll, Payload{})
	if err != nil {
		t.Fatal(err)
	}
	poll.OK(Payload{})
	defer func() {
		message, _ := recover().(string)
		if !strings.Contains(message, "completed twice") {
			t.Fatalf("want a completed-twice panic, got %q", message)
		}
	}()
	poll.Fail("again")
}

func TestRecorderPanicsWhenTheClockGoesBack(t *testing.T) {
	times := []int64{20, 10}
	recorder := NewRecorder(func() int64 {
		now := times[0]
		times = times[1:]
		return now
	})
	poll, err := recorder.Invoke(1, FuncPoll, Payload{})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		message, _ := recover().(string)
		if !strings.Contains(message, "clock went back") {
			t.Fatalf("want a clock panic, got %q", message)
		}
	}()
	poll.OK(Payload{})
}

func TestRecorderCopiesPayloads(t *testing.T) {
	recorder := NewRecorder(tickingClock())
	records := []Record{{Offset: 0, Value: "a"}}
	polls := []Poll{{Partition: topic0, From: 0, Records: records}}
	poll, err := recorder.Invoke(1, FuncPoll, Payload{})
	if err != nil {
		t.Fatal(err)
	}
	poll.OK(Payload{Polls: polls})
	records[0].Value = "rewritten"
	polls[0].From = 7
	got := recorder.History()[1].Polls[0]
	if got.From != 0 || got.Records[0].Value != "a" {
		t.Fatalf("caller's buffers reached the history: %+v", got)
	}
}

func TestRecorderRefusesToGrowPastItsBound(t *testing.T) {
	// A bound of 5 rather than millions: room for two operations and
	// one more invoke, which must be refused because its completion
	// would not fit once the running one completes.
	recorder := NewRecorder(tickingClock())
	recorder.opsMax = 5
	first, err := recorder.Invoke(1, FuncPoll, Payload{})
	if err != nil {
		t.Fatal(err)
	}
	second, err := recorder.Invoke(2, FuncPoll, Payload{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := recorder.Invoke(3, FuncPoll, Payload{}); !errors.Is(err, ErrHistoryFull) {
		t.Fatalf("want ErrHistoryFull, got %v", err)
	}
	first.OK(Payload{})
	second.OK(Payload{})
	if recorder.Len() != 4 {
		t.Fatalf("len %d, want 4", recorder.Len())
	}
	if historyOpsMax < 1_000_000 {
		t.Fatalf("historyOpsMax %d is too small for a real run", historyOpsMax)
	}
}

func TestRecorderRefusesMalformedPayloads(t *testing.T) {
	recorder := NewRecorder(tickingClock())
	if _, err := recorder.Invoke(1, FuncPoll, Payload{Sends: []Send{{Partition: topic0, Value: "a", Offset: OffsetUnknown}}}); err == nil {
		t.Fatal("a poll carrying sends was recorded")
	}
	if recorder.Len() != 0 {
		t.Fatalf("a refused invoke left %d ops", recorder.Len())
	}
	send, err := recorder.Invoke(1, FuncSend, Payload{Sends: []Send{{Partition: topic0, Value: "a", Offset: OffsetUnknown}}})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		message, _ := recover().(string)
		if !strings.Contains(message, "acknowledges \"b\"") {
			t.Fatalf("want a panic about the wrong value, got %q", message)
		}
	}()
	send.OK(Payload{Sends: []Send{{Partition: topic0, Value: "b", Offset: 0}}})
}

func TestRecorderCopiesPayloadsIntoBlocks(t *testing.T) {
	recorder := NewRecorder(tickingClock())
	sends := []Send{{Partition: topic0, Value: "a", Offset: OffsetUnknown}}
	first, err := recorder.Invoke(1, FuncSend, Payload{Sends: sends})
	if err != nil {
		t.Fatal(err)
	}
	sends[0].Value = "b" // the caller reuses its buffer
	if _, err := recorder.Invoke(2, FuncSend, Payload{Sends: sends}); err != nil {
		t.Fatal(err)
	}
	records := []Record{{Offset: 0, Value: "a"}}
	poll, err := recorder.Invoke(3, FuncPoll, Payload{})
	if err != nil {
		t.Fatal(err)
	}
	poll.OK(Payload{Polls: []Poll{{Partition: topic0, From: 0, Records: records}, {Partition: topic0, From: 1, Records: []Record{}}}})
	records[0].Value = "c"

	// Appending to a recorded slice must not write over the payload
	// recorded after it in the same block.
	recorded := first.Invocation().Sends
	_ = append(recorded, Send{Partition: topic0, Value: "x"})

	history := recorder.History()
	if got := history[0].Sends[0].Value; got != "a" {
		t.Errorf("first send's value is %q, want a", got)
	}
	if got := history[1].Sends[0].Value; got != "b" {
		t.Errorf("second send's value is %q, want b", got)
	}
	polls := history[3].Polls
	if got := polls[0].Records[0].Value; got != "a" {
		t.Errorf("polled value is %q, want a", got)
	}
	if polls[1].Records == nil || len(polls[1].Records) != 0 {
		t.Errorf("an empty poll's records are %#v, want empty and not nil", polls[1].Records)
	}
	if history[2].Sends != nil {
		t.Errorf("a poll invoke has sends %#v, want nil", history[2].Sends)
	}
}

func TestRecorderHoldsManyChunks(t *testing.T) {
	recorder := NewRecorder(tickingClock())
	for process := range 3*opsPerChunk + 5 {
		op, err := recorder.Invoke(process, FuncSend, Payload{Sends: []Send{{Partition: topic0, Value: strings.Repeat("v", process+1), Offset: OffsetUnknown}}})
		if err != nil {
			t.Fatal(err)
		}
		op.Fail("refused")
	}
	history := recorder.History()
	if len(history) != recorder.Len() || len(history) != 2*(3*opsPerChunk+5) {
		t.Fatalf("history has %d ops, Len says %d", len(history), recorder.Len())
	}
	for i, op := range history {
		if op.Index != i || recorder.Op(i).Index != i {
			t.Fatalf("op %d has index %d, Op(%d) index %d", i, op.Index, i, recorder.Op(i).Index)
		}
	}
	if err := Validate(history); err != nil {
		t.Fatal(err)
	}
	for _, index := range []int{-1, recorder.Len(), 8 * opsPerChunk} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("Op(%d) of %d ops did not panic", index, recorder.Len())
				}
			}()
			recorder.Op(index)
		}()
	}
}

func TestRecorderEachVisitsEveryOpInOrder(t *testing.T) {
	recorder := NewRecorder(tickingClock())
	for process := range opsPerChunk + 3 {
		op, err := recorder.Invoke(process, FuncPoll, Payload{})
		if err != nil {
			t.Fatal(err)
		}
		op.Fail("refused")
	}
	visited := 0
	recorder.Each(func(index int, op *Op) {
		if index != visited || op.Index != index || op.Time != recorder.Op(index).Time {
			t.Fatalf("visit %d: index %d, op %+v", visited, index, *op)
		}
		visited++
	})
	if visited != recorder.Len() {
		t.Fatalf("visited %d of %d ops", visited, recorder.Len())
	}
}
