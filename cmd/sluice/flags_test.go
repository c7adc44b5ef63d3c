package main

import (
	"flag"
	"io"
	"slices"
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"
)

func TestParseAnyOrderTakesFlagsAfterPositionalArguments(t *testing.T) {
	flags := flag.NewFlagSet("topic create", flag.ContinueOnError)
	flags.SetOutput(io.Discard)
	partitions := flags.Int("partitions", -1, "")
	positional, err := parseAnyOrder(flags, []string{"orders", "--partitions", "3", "payments"})
	if err != nil || *partitions != 3 || !slices.Equal(positional, []string{"orders", "payments"}) {
		t.Fatalf("positional %v, partitions %d, error %v", positional, *partitions, err)
	}
	if _, err := parseAnyOrder(flags, []string{"orders", "--bogus"}); err == nil {
		t.Fatal("an unknown flag after a positional argument was taken")
	}
	positional, err = parseAnyOrder(flags, []string{"--", "-odd-name"})
	if err != nil || !slices.Equal(positional, []string{"-odd-name"}) {
		t.Fatalf("after --: positional %v, error %v", positional, err)
	}
}

func TestIntFlagsRefuseWhatTheirFieldCannotHold(t *testing.T) {
	if _, err := int32Flag("partitions", 4294967297); err == nil {
		t.Error("--partitions 4294967297 was taken (it would wrap to 1)")
	}
	if _, err := int32Flag("partitions", 0); err == nil {
		t.Error("--partitions 0 was taken")
	}
	if v, err := int32Flag("partitions", -1); err != nil || v != -1 {
		t.Errorf("--partitions -1: %d, %v", v, err)
	}
	if _, err := int16Flag("replication-factor", 65537); err == nil {
		t.Error("--replication-factor 65537 was taken (it would wrap to 1)")
	}
	if v, err := int16Flag("replication-factor", 3); err != nil || v != 3 {
		t.Errorf("--replication-factor 3: %d, %v", v, err)
	}
}

// TestCommandsRefuseBadFlagsBeforeConnecting: each of these used to be
// taken (a negative count read as "no limit", NaN as a rate, a positional
// word ignored) and now exits 2 before any connection is tried.
func TestCommandsRefuseBadFlagsBeforeConnecting(t *testing.T) {
	for _, c := range []struct {
		run  func([]string) int
		args []string
	}{
		{runConsume, []string{"--topic", "t", "--count", "-1"}},
		{runConsume, []string{"--topic", "t", "--exit-idle", "-1s"}},
		{runConsume, []string{"orders", "--count", "3"}},
		{runProduce, []string{"--topic", "t", "extra"}},
		{runSim, []string{"--seeds", "1-2", "--workers", "-1"}},
		{runSim, []string{"--seeds", "1-2", "--workers", "5000"}},
	} {
		if code := c.run(c.args); code != 2 {
			t.Errorf("%v: exit %d, want 2", c.args, code)
		}
	}
	for _, rate := range []string{"NaN", "+Inf"} {
		if _, err := parseBenchFlags("produce", []string{"--rate", rate}); err == nil {
			t.Errorf("bench produce --rate %s: accepted", rate)
		}
	}
}

// A topic whose partitions hold different replica counts (after a
// reassignment) reports partition 0's, as kafka-topics.sh does, every time.
func TestTopicReplicationFactorIsPartitionZeros(t *testing.T) {
	partitions := kadm.PartitionDetails{
		0: {Partition: 0, Replicas: []int32{2, 3}},
		1: {Partition: 1, Replicas: []int32{1}},
		2: {Partition: 2, Replicas: []int32{2, 3, 1}},
	}
	for range 20 {
		if got := replicationFactor(partitions); got != 2 {
			t.Fatalf("replication factor %d, want partition 0's 2", got)
		}
	}
}
