package main

import (
	"flag"
	"io"
	"slices"
	"testing"
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
