package controller

import (
	"slices"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
)

func TestCreatePartitionsGrowsTopics(t *testing.T) {
	tc := newTestController(t, Config{}, 1, 2, 3)
	topic := tc.mustCreate("grow", 3, 2)
	resp := tc.createPartitions(false, growTo("grow", 7))
	requireCode(t, "grow", resp.Topics[0].ErrorCode, resp.Topics[0].ErrorMessage, nil)
	if len(topic.Partitions) != 7 {
		t.Fatalf("%d partitions, want 7", len(topic.Partitions))
	}
	// The new partitions continue the round-robin of leaders.
	leaders := map[int32]int{}
	for i, p := range topic.Partitions {
		if p.Index != int32(i) || len(p.Replicas) != 2 || !slices.Equal(p.ISR, p.Replicas) || p.Leader != p.Replicas[0] {
			t.Fatalf("partition %d: %+v", i, p)
		}
		if i > 0 {
			previous := slices.Index([]int32{1, 2, 3}, topic.Partitions[i-1].Leader)
			if want := []int32{1, 2, 3}[(previous+1)%3]; p.Leader != want {
				t.Fatalf("partition %d led by %d, want %d after %d", i, p.Leader, want, topic.Partitions[i-1].Leader)
			}
		}
		leaders[p.Leader]++
	}
	if leaders[1]+leaders[2]+leaders[3] != 7 || min(leaders[1], leaders[2], leaders[3]) < 2 {
		t.Fatalf("leaders %v", leaders)
	}
}

func TestCreatePartitionsWithAssignment(t *testing.T) {
	tc := newTestController(t, Config{}, 1, 2, 3)
	topic := tc.mustCreate("manual", 1, 2)
	tc.fence(3)
	resp := tc.createPartitions(false, growTo("manual", 3, []int32{3, 2}, []int32{1, 3}))
	requireCode(t, "manual", resp.Topics[0].ErrorCode, resp.Topics[0].ErrorMessage, nil)
	if p := topic.Partitions[1]; !slices.Equal(p.Replicas, []int32{3, 2}) || !slices.Equal(p.ISR, []int32{2}) || p.Leader != 2 {
		t.Fatalf("partition 1: %+v", p)
	}
	if p := topic.Partitions[2]; !slices.Equal(p.Replicas, []int32{1, 3}) || !slices.Equal(p.ISR, []int32{1}) || p.Leader != 1 {
		t.Fatalf("partition 2: %+v", p)
	}
}

func TestCreatePartitionsRefusals(t *testing.T) {
	for _, tt := range []struct {
		name string
		grow func(tc *testController) *kerr.Error
	}{
		{"unknown topic", func(tc *testController) *kerr.Error {
			return code(tc.createPartitions(false, growTo("missing", 3)).Topics[0].ErrorCode)
		}},
		{"same count", func(tc *testController) *kerr.Error {
			return code(tc.createPartitions(false, growTo("t", 2)).Topics[0].ErrorCode)
		}},
		{"fewer", func(tc *testController) *kerr.Error {
			return code(tc.createPartitions(false, growTo("t", 1)).Topics[0].ErrorCode)
		}},
		{"too many", func(tc *testController) *kerr.Error {
			return code(tc.createPartitions(false, growTo("t", partitionsPerTopicMax+1)).Topics[0].ErrorCode)
		}},
		{"named twice", func(tc *testController) *kerr.Error {
			resp := tc.createPartitions(false, growTo("t", 3), growTo("t", 4))
			if resp.Topics[0].ErrorCode != resp.Topics[1].ErrorCode {
				return nil
			}
			return code(resp.Topics[0].ErrorCode)
		}},
		{"assignment count", func(tc *testController) *kerr.Error {
			return code(tc.createPartitions(false, growTo("t", 4, []int32{1})).Topics[0].ErrorCode)
		}},
		{"assignment replica count", func(tc *testController) *kerr.Error {
			return code(tc.createPartitions(false, growTo("t", 3, []int32{1, 2, 3})).Topics[0].ErrorCode)
		}},
		{"assignment unknown broker", func(tc *testController) *kerr.Error {
			return code(tc.createPartitions(false, growTo("t", 3, []int32{1, 7})).Topics[0].ErrorCode)
		}},
		{"assignment repeats a broker", func(tc *testController) *kerr.Error {
			return code(tc.createPartitions(false, growTo("t", 3, []int32{2, 2})).Topics[0].ErrorCode)
		}},
		{"replicas than unfenced brokers", func(tc *testController) *kerr.Error {
			tc.fence(2)
			tc.fence(3)
			return code(tc.createPartitions(false, growTo("t", 3)).Topics[0].ErrorCode)
		}},
		{"request too big", func(tc *testController) *kerr.Error {
			tc.mustCreate("u", 1, 1)
			resp := tc.createPartitions(false, growTo("t", partitionsPerTopicMax), growTo("u", 4))
			if resp.Topics[1].ErrorCode != resp.Topics[0].ErrorCode {
				return nil
			}
			return code(resp.Topics[0].ErrorCode)
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			tc := newTestController(t, Config{}, 1, 2, 3)
			tc.mustCreate("t", 2, 2)
			want := map[string]*kerr.Error{
				"unknown topic": kerr.UnknownTopicOrPartition, "same count": kerr.InvalidPartitions, "fewer": kerr.InvalidPartitions,
				"too many": kerr.InvalidPartitions, "named twice": kerr.InvalidRequest, "assignment count": kerr.InvalidReplicaAssignment,
				"assignment replica count": kerr.InvalidReplicaAssignment, "assignment unknown broker": kerr.InvalidReplicaAssignment,
				"assignment repeats a broker": kerr.InvalidReplicaAssignment, "replicas than unfenced brokers": kerr.InvalidReplicationFactor,
				"request too big": kerr.InvalidPartitions,
			}[tt.name]
			if got := tt.grow(tc); got != want {
				t.Fatalf("got %v, want %v", got, want)
			}
			if n := len(tc.c.Image().Topics["t"].Partitions); n != 2 {
				t.Fatalf("a refused request left %d partitions", n)
			}
		})
	}
}

func TestCreatePartitionsValidateOnly(t *testing.T) {
	tc := newTestController(t, Config{}, 1)
	topic := tc.mustCreate("t", 1, 1)
	proposals := tc.proposer.changes()
	resp := tc.createPartitions(true, growTo("t", 5))
	requireCode(t, "validate", resp.Topics[0].ErrorCode, resp.Topics[0].ErrorMessage, nil)
	if len(topic.Partitions) != 1 || tc.proposer.changes() != proposals {
		t.Fatal("validate-only created partitions")
	}
}

func code(c int16) *kerr.Error {
	if c == 0 {
		return nil
	}
	return kerr.ErrorForCode(c).(*kerr.Error)
}
