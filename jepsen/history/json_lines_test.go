package history

import (
	"bytes"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func sampleHistory() []Op {
	orders1 := TopicPartition{Topic: "orders", Partition: 1}
	return []Op{
		{Index: 0, Process: 0, Type: Invoke, F: FuncSend, Time: 5,
			Payload: Payload{Sends: []Send{{Partition: orders1, Key: "k", Value: "p0-1", Offset: OffsetUnknown}}}},
		{Index: 1, Process: 0, Type: OK, F: FuncSend, Time: 9,
			Payload: Payload{Sends: []Send{{Partition: orders1, Key: "k", Value: "p0-1", Offset: 4}}}},
		{Index: 2, Process: 1, Type: Invoke, F: FuncSubscribe, Time: 10, Payload: Payload{Topics: []string{"orders"}}},
		{Index: 3, Process: 1, Type: OK, F: FuncSubscribe, Time: 11, Payload: Payload{
			Group: "g", MemberID: "m-1", Generation: 3, Assigned: []TopicPartition{orders1}}},
		{Index: 4, Process: 1, Type: Invoke, F: FuncPoll, Time: 12},
		{Index: 5, Process: 1, Type: OK, F: FuncPoll, Time: 15, Payload: Payload{Polls: []Poll{
			{Partition: orders1, From: 4, Records: []Record{{Offset: 4, Key: "k", Value: "p0-1"}}},
			{Partition: TopicPartition{Topic: "orders", Partition: 2}, From: 0, Records: []Record{}},
		}}},
		{Index: 6, Process: 1, Type: Invoke, F: FuncCommit, Time: 16, Payload: Payload{Commits: []Commit{
			{Group: "g", Partition: orders1, Offset: 5, Generation: 3}}}},
		{Index: 7, Process: 1, Type: Info, F: FuncCommit, Time: 30, Error: "connection reset <&>"},
	}
}

func TestWriteThenReadGivesTheSameHistory(t *testing.T) {
	ops := sampleHistory()
	var buffer bytes.Buffer
	if err := Write(&buffer, ops); err != nil {
		t.Fatal(err)
	}
	if lines := strings.Count(buffer.String(), "\n"); lines != len(ops) {
		t.Fatalf("%d lines for %d ops", lines, len(ops))
	}
	back, err := Read(&buffer)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(ops, back, cmpopts.EquateEmpty()); diff != "" {
		t.Fatalf("round trip (-wrote +read):\n%s", diff)
	}
	if err := Validate(back); err != nil {
		t.Fatalf("sample history does not validate: %v", err)
	}
}

func TestWriteUsesNamesNotNumbers(t *testing.T) {
	var buffer bytes.Buffer
	if err := Write(&buffer, sampleHistory()[:2]); err != nil {
		t.Fatal(err)
	}
	want := `{"index":0,"process":0,"type":"invoke","f":"send","time":5,"sends":[{"partition":"orders-1","key":"k","value":"p0-1","offset":-1}]}` + "\n" +
		`{"index":1,"process":0,"type":"ok","f":"send","time":9,"sends":[{"partition":"orders-1","key":"k","value":"p0-1","offset":4}]}` + "\n"
	if buffer.String() != want {
		t.Fatalf("encoded\n%s\nwant\n%s", buffer.String(), want)
	}
}

func TestReadRejectsMalformedLines(t *testing.T) {
	valid := `{"index":0,"process":0,"type":"invoke","f":"poll","time":1}`
	for name, text := range map[string]string{
		"unknown field":   `{"index":0,"process":0,"type":"invoke","f":"poll","time":1,"colour":"red"}`,
		"unknown type":    `{"index":0,"process":0,"type":"maybe","f":"poll","time":1}`,
		"unknown func":    `{"index":0,"process":0,"type":"invoke","f":"dance","time":1}`,
		"bad partition":   `{"index":0,"process":0,"type":"invoke","f":"send","time":1,"sends":[{"partition":"orders","value":"a","offset":-1}]}`,
		"index skipped":   valid + "\n" + `{"index":2,"process":0,"type":"ok","f":"poll","time":1}`,
		"blank line":      valid + "\n\n",
		"two ops on line": valid + valid,
		"not json":        "hello",
	} {
		if _, err := Read(strings.NewReader(text)); err == nil {
			t.Errorf("%s: read without error", name)
		}
	}
}

func TestReadRejectsOverlongLines(t *testing.T) {
	line := `{"index":0,"process":0,"type":"invoke","f":"poll","time":1,"error":"` + strings.Repeat("x", 1000) + `"}`
	if _, err := readLimited(strings.NewReader(line), 2000); err != nil {
		t.Fatalf("line under the limit refused: %v", err)
	}
	_, err := readLimited(strings.NewReader(line), 1000)
	if err == nil || !strings.Contains(err.Error(), "longer than") {
		t.Fatalf("want a line-length error, got %v", err)
	}
}
