package history

import (
	"slices"
	"testing"
)

func TestTopicPartitionRoundTripsThroughText(t *testing.T) {
	for _, tp := range []TopicPartition{
		{Topic: "orders", Partition: 0},
		{Topic: "my-topic-with-dashes", Partition: 12},
		{Topic: "a.b_c", Partition: 2147483647},
	} {
		text, err := tp.MarshalText()
		if err != nil {
			t.Fatal(err)
		}
		var back TopicPartition
		if err := back.UnmarshalText(text); err != nil {
			t.Fatalf("%s: %v", text, err)
		}
		if back != tp {
			t.Fatalf("%s came back as %+v", text, back)
		}
	}
}

func TestTopicPartitionRejectsMalformedText(t *testing.T) {
	for _, text := range []string{"", "orders", "orders-", "-3", "orders-x", "orders-+1", "orders-99999999999"} {
		if _, err := ParseTopicPartition(text); err == nil {
			t.Errorf("%q parsed", text)
		}
	}
	if _, err := (TopicPartition{Topic: "", Partition: 1}).MarshalText(); err == nil {
		t.Error("empty topic encoded")
	}
}

func TestTopicPartitionsSortByTopicThenNumber(t *testing.T) {
	got := []TopicPartition{{"b", 0}, {"a", 10}, {"a", 2}}
	slices.SortFunc(got, TopicPartition.Compare)
	want := []TopicPartition{{"a", 2}, {"a", 10}, {"b", 0}}
	if !slices.Equal(got, want) {
		t.Fatalf("sorted %v, want %v", got, want)
	}
	if !(TopicPartition{"a", 2}).Less(TopicPartition{"a", 10}) {
		t.Fatal("a-2 should sort before a-10")
	}
}
