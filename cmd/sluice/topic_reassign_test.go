package main

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

// TestParseReassignReplicaList: --replicas takes broker ids separated by commas,
// in order, and refuses anything else with a reason.
func TestParseReassignReplicaList(t *testing.T) {
	for text, want := range map[string][]int32{
		"3":         {3},
		"3,1,2":     {3, 1, 2},
		" 4 , 0 ":   {4, 0},
		"100,20000": {100, 20000},
	} {
		got, err := parseReplicaList(text)
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("parseReplicaList(%q) = %v, %v; want %v", text, got, err, want)
		}
	}
	for text, reason := range map[string]string{
		"":            "separated by commas",
		"1,,2":        "separated by commas",
		"1,":          "separated by commas",
		"a":           `"a" is not a broker id`,
		"1,-2":        `"-2" is not a broker id`,
		"1.5":         `"1.5" is not a broker id`,
		"99999999999": "is not a broker id",
		"1,2,1":       "broker 1 is named twice",
	} {
		if got, err := parseReplicaList(text); err == nil || !strings.Contains(err.Error(), reason) {
			t.Errorf("parseReplicaList(%q) = %v, %v; want an error saying %q", text, got, err, reason)
		}
	}
}

// TestParseReassignmentJSON: kafka-reassign-partitions.sh's file, as its
// --generate prints it (log_dirs "any" included), reads in file order;
// with --cancel the replicas are not needed.
func TestParseReassignmentJSON(t *testing.T) {
	const file = `{"version":1,"partitions":[
		{"topic":"orders","partition":1,"replicas":[3,4],"log_dirs":["any","any"]},
		{"topic":"orders","partition":0,"replicas":[2,3,4]},
		{"topic":"audit","partition":0,"replicas":[1]}
	]}`
	got, err := parseReassignmentJSON([]byte(file), false)
	want := []reassignment{
		{Topic: "orders", Partition: 1, Replicas: []int32{3, 4}},
		{Topic: "orders", Partition: 0, Replicas: []int32{2, 3, 4}},
		{Topic: "audit", Partition: 0, Replicas: []int32{1}},
	}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("parsed %+v, %v; want %+v", got, err, want)
	}
	got, err = parseReassignmentJSON([]byte(file), true)
	for i := range want {
		want[i].Replicas = nil
	}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("parsed for --cancel %+v, %v; want %+v", got, err, want)
	}
	// No version means 1; a cancel file needs no replicas.
	got, err = parseReassignmentJSON([]byte(`{"partitions":[{"topic":"t","partition":2}]}`), true)
	if err != nil || !reflect.DeepEqual(got, []reassignment{{Topic: "t", Partition: 2}}) {
		t.Fatalf("a cancel file without version or replicas: %+v, %v", got, err)
	}
}

// TestParseReassignmentJSONRefusesBadFiles: every malformed or
// unsupported file is an error naming what is wrong, never a panic and
// never a silent cancellation.
func TestParseReassignmentJSONRefusesBadFiles(t *testing.T) {
	for _, c := range []struct{ file, reason string }{
		{``, "empty"},
		{"  \n", "empty"},
		{`{`, "not a reassignment file"},
		{`[]`, "not a reassignment file"},
		{`null`, "no partitions"},
		{`{"version":1}`, "no partitions"},
		{`{"version":1,"partitions":[]}`, "no partitions"},
		{`{"version":2,"partitions":[{"topic":"t","partition":0,"replicas":[1]}]}`, "version 2"},
		{`{"version":"1","partitions":[]}`, "not a reassignment file"},
		{`{"version":1,"partitions":[{"topic":"t","partition":0,"replicas":[1]}]} {}`, "after the JSON object"},
		{`{"version":1,"partition":[{"topic":"t","partition":0,"replicas":[1]}]}`, `unknown field "partition"`},
		{`{"version":1,"partitions":[{"topic":"t","partition":0,"replica":[1]}]}`, `partitions[0]: json: unknown field "replica"`},
		{`{"version":1,"partitions":[{"topic":"t","partition":0}]}`, `t-0: no "replicas"`},
		{`{"version":1,"partitions":[{"topic":"t","partition":0,"replicas":null}]}`, `t-0: no "replicas"`},
		{`{"version":1,"partitions":[{"topic":"t","partition":0,"replicas":[]}]}`, "no replicas"},
		{`{"version":1,"partitions":[{"topic":"t","partition":0,"replicas":[1,2,1]}]}`, "broker 1 is named twice"},
		{`{"version":1,"partitions":[{"topic":"t","partition":0,"replicas":[-1]}]}`, "negative"},
		{`{"version":1,"partitions":[{"topic":"t","partition":0,"replicas":["1"]}]}`, "partitions[0]"},
		{`{"version":1,"partitions":[{"topic":"t","partition":0,"replicas":[1.5]}]}`, "partitions[0]"},
		{`{"version":1,"partitions":[{"topic":"t","partition":4294967296,"replicas":[1]}]}`, "partitions[0]"},
		{`{"version":1,"partitions":[{"partition":0,"replicas":[1]}]}`, `no "topic"`},
		{`{"version":1,"partitions":[{"topic":"","partition":0,"replicas":[1]}]}`, `no "topic"`},
		{`{"version":1,"partitions":[{"topic":"t","replicas":[1]}]}`, `no "partition"`},
		{`{"version":1,"partitions":[{"topic":"t","partition":-1,"replicas":[1]}]}`, "partition -1 is negative"},
		{`{"version":1,"partitions":[null]}`, `partitions[0]: no "topic"`},
		{`{"version":1,"partitions":[7]}`, "partitions[0]"},
		{`{"version":1,"partitions":[{"topic":"t","partition":0,"replicas":[1],"log_dirs":["any","any"]}]}`, "2 log_dirs for 1 replicas"},
		{`{"version":1,"partitions":[{"topic":"t","partition":0,"replicas":[1],"log_dirs":["/data"]}]}`, `log_dirs entry "/data"`},
		{`{"version":1,"partitions":[{"topic":"t","partition":0,"replicas":[1]},{"topic":"t","partition":0,"replicas":[2]}]}`, "partitions[1]: t-0 is named more than once"},
	} {
		got, err := parseReassignmentJSON([]byte(c.file), false)
		if err == nil || !strings.Contains(err.Error(), c.reason) {
			t.Errorf("parseReassignmentJSON(%s) = %+v, %v; want an error saying %q", c.file, got, err, c.reason)
		}
	}
}

// TestPlanReassign: the flags `sluice topic reassign` takes, alone or
// with a file, and the combinations it refuses.
func TestPlanReassign(t *testing.T) {
	base := reassignOptions{partition: -1, timeout: time.Minute}
	with := func(change func(*reassignOptions)) reassignOptions {
		o := base
		change(&o)
		return o
	}
	file := filepath.Join(t.TempDir(), "reassign.json")
	if err := os.WriteFile(file, []byte(`{"version":1,"partitions":[{"topic":"orders","partition":2,"replicas":[1,2]}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		options reassignOptions
		topics  []string
		want    []reassignment
	}{
		{with(func(o *reassignOptions) { o.partition, o.replicas = 0, "3,4" }), []string{"orders"}, []reassignment{{"orders", 0, []int32{3, 4}}}},
		{with(func(o *reassignOptions) { o.partition, o.cancel = 7, true }), []string{"orders"}, []reassignment{{"orders", 7, nil}}},
		{with(func(o *reassignOptions) { o.jsonFile = file }), nil, []reassignment{{"orders", 2, []int32{1, 2}}}},
		{with(func(o *reassignOptions) { o.jsonFile, o.cancel = file, true }), nil, []reassignment{{"orders", 2, nil}}},
	} {
		got, err := planReassign(c.options, c.topics)
		if err != nil || !reflect.DeepEqual(got, c.want) {
			t.Errorf("planReassign(%+v, %q) = %+v, %v; want %+v", c.options, c.topics, got, err, c.want)
		}
	}
	for _, c := range []struct {
		options reassignOptions
		topics  []string
		reason  string
	}{
		{with(func(o *reassignOptions) { o.partition, o.replicas = 0, "1" }), nil, "name one topic"},
		{with(func(o *reassignOptions) { o.partition, o.replicas = 0, "1" }), []string{"a", "b"}, "name one topic"},
		{with(func(o *reassignOptions) {}), []string{"orders", "--partition", "0"}, "--partition after the topic"},
		{with(func(o *reassignOptions) { o.replicas = "1" }), []string{"orders"}, "give --partition"},
		{with(func(o *reassignOptions) { o.partition = 0 }), []string{"orders"}, "give --replicas"},
		{with(func(o *reassignOptions) { o.partition, o.replicas, o.cancel = 0, "1", true }), []string{"orders"}, "not both"},
		{with(func(o *reassignOptions) { o.partition, o.replicas = 0, "1,x" }), []string{"orders"}, `--replicas "1,x"`},
		{with(func(o *reassignOptions) { o.partition = 1 << 40 }), []string{"orders"}, "too large"},
		{with(func(o *reassignOptions) { o.partition, o.replicas, o.timeout = 0, "1", 0 }), []string{"orders"}, "--timeout"},
		{with(func(o *reassignOptions) { o.jsonFile = file }), []string{"orders"}, "give no topic"},
		{with(func(o *reassignOptions) { o.jsonFile, o.partition = file, 0 }), nil, "give no topic"},
		{with(func(o *reassignOptions) { o.jsonFile = filepath.Join(t.TempDir(), "missing.json") }), nil, "missing.json"},
	} {
		if got, err := planReassign(c.options, c.topics); err == nil || !strings.Contains(err.Error(), c.reason) {
			t.Errorf("planReassign(%+v, %q) = %+v, %v; want an error saying %q", c.options, c.topics, got, err, c.reason)
		}
	}
}

// TestTopicReassignRefusesBadFlags: bad input exits 2, before any broker
// is asked (none listens at the address given).
func TestTopicReassignRefusesBadFlags(t *testing.T) {
	for _, args := range [][]string{
		{"reassign", "orders"},
		{"reassign", "--partition", "0", "orders"},
		{"reassign", "--partition", "0", "--replicas", "1,1", "orders"},
		{"reassign", "--reassignment-json-file", filepath.Join(t.TempDir(), "missing.json")},
		{"reassign", "--timeout", "soon", "--partition", "0", "--cancel", "orders"},
	} {
		if code := runTopic(append([]string{args[0], "--brokers", "127.0.0.1:1"}, args[1:]...)); code != 2 {
			t.Errorf("sluice topic %q exits %d, want 2", args, code)
		}
	}
}

// FuzzParseReassignmentJSON: whatever the file holds, parsing returns a
// plan or an error, never panics, and a plan it returns is one the
// broker can be asked for: named partitions, each once, with replicas
// that pass checkReplicas unless cancelling.
func FuzzParseReassignmentJSON(f *testing.F) {
	for _, seed := range []string{
		`{"version":1,"partitions":[{"topic":"t","partition":0,"replicas":[1,2],"log_dirs":["any","any"]}]}`,
		`{"partitions":[{"topic":"t","partition":1}]}`,
		`{"version":1,"partitions":[null,{"topic":"","partition":-1,"replicas":[]}]}`,
		`{"version":1,"partitions":[{"topic":"t","partition":0,"replicas":[1]}]} trailing`,
		``,
	} {
		f.Add([]byte(seed), false)
		f.Add([]byte(seed), true)
	}
	f.Fuzz(func(t *testing.T, data []byte, cancel bool) {
		plan, err := parseReassignmentJSON(data, cancel)
		if err != nil {
			return
		}
		if len(plan) == 0 {
			t.Fatal("an empty plan without an error")
		}
		seen := map[string]bool{}
		for _, r := range plan {
			if r.Topic == "" || r.Partition < 0 || seen[r.name()] {
				t.Fatalf("plan %+v: entry %+v", plan, r)
			}
			seen[r.name()] = true
			if cancel != (r.Replicas == nil) {
				t.Fatalf("cancel %v, but %s has replicas %v", cancel, r.name(), r.Replicas)
			}
			if !cancel {
				if err := checkReplicas(r.Replicas); err != nil {
					t.Fatalf("%s: replicas %v: %v", r.name(), r.Replicas, err)
				}
			}
		}
	})
}
