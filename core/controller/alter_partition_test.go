package controller

import (
	"slices"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"

	"sluice/core/metadata"
)

func TestAlterPartitionShrinksAndGrowsTheISR(t *testing.T) {
	for _, version := range []int16{0, 1, 2, 3} {
		tc := newTestController(t, Config{}, 1, 2, 3)
		p := tc.mustCreate("t", 1, 3).Partitions[0]
		leader := p.Leader
		leaderEpoch, partitionEpoch := p.LeaderEpoch, p.PartitionEpoch
		shrunk := []int32{leader}
		resp := tc.alterPartition(version, leader, alterISR("t", p, shrunk...))
		answer := resp.Topics[0].Partitions[0]
		requireErrorCode(t, "shrink", answer.ErrorCode, nil)
		if answer.LeaderID != leader || answer.LeaderEpoch != leaderEpoch || answer.PartitionEpoch != partitionEpoch+1 ||
			!slices.Equal(answer.ISR, shrunk) || !slices.Equal(p.ISR, shrunk) {
			t.Fatalf("v%d shrink answered %+v; image ISR %v", version, answer, p.ISR)
		}
		grown := slices.Clone(p.Replicas)
		resp = tc.alterPartition(version, leader, alterISR("t", p, grown...))
		answer = resp.Topics[0].Partitions[0]
		requireErrorCode(t, "grow", answer.ErrorCode, nil)
		if answer.PartitionEpoch != partitionEpoch+2 || !slices.Equal(p.ISR, grown) || p.LeaderEpoch != leaderEpoch {
			t.Fatalf("v%d grow answered %+v; image %+v", version, answer, p)
		}
		// Asking for the ISR it already has changes nothing.
		proposals := len(tc.proposer.proposals)
		resp = tc.alterPartition(version, leader, alterISR("t", p, grown...))
		if resp.Topics[0].Partitions[0].ErrorCode != 0 || len(tc.proposer.proposals) != proposals || p.PartitionEpoch != partitionEpoch+2 {
			t.Fatalf("v%d unchanged ISR proposed or failed: %+v", version, resp.Topics[0].Partitions[0])
		}
	}
}

func TestAlterPartitionRefusals(t *testing.T) {
	type setup struct {
		tc       *testController
		p        *metadata.Partition
		leader   int32
		follower int32
	}
	for _, tt := range []struct {
		name    string
		version int16
		build   func(s setup) (sender int32, item alterPartitionItem)
		want    *kerr.Error
	}{
		{"stale partition epoch", 3, func(s setup) (int32, alterPartitionItem) {
			item := alterISR("t", s.p, s.leader)
			item.partitionEpoch--
			return s.leader, item
		}, kerr.InvalidUpdateVersion},
		{"old leader epoch", 3, func(s setup) (int32, alterPartitionItem) {
			item := alterISR("t", s.p, s.leader)
			item.leaderEpoch--
			return s.leader, item
		}, kerr.FencedLeaderEpoch},
		{"epochs from the future", 3, func(s setup) (int32, alterPartitionItem) {
			item := alterISR("t", s.p, s.leader)
			item.partitionEpoch++
			return s.leader, item
		}, kerr.NotController},
		{"sent by a follower", 3, func(s setup) (int32, alterPartitionItem) {
			return s.follower, alterISR("t", s.p, s.follower)
		}, kerr.NotLeaderForPartition},
		{"ISR without the leader", 3, func(s setup) (int32, alterPartitionItem) {
			return s.leader, alterISR("t", s.p, s.follower)
		}, kerr.IneligibleReplica},
		{"ISR with a fenced broker", 3, func(s setup) (int32, alterPartitionItem) {
			s.tc.fence(s.follower)
			return s.leader, alterISR("t", s.p, s.leader, s.follower)
		}, kerr.IneligibleReplica},
		{"ISR with a broker of another epoch", 3, func(s setup) (int32, alterPartitionItem) {
			item := alterISR("t", s.p, s.leader, s.follower)
			item.epochs = map[int32]int64{s.follower: s.tc.epochs[s.follower] - 1}
			return s.leader, item
		}, kerr.IneligibleReplica},
		{"ISR with a broker that is not a replica", 3, func(s setup) (int32, alterPartitionItem) {
			return s.leader, alterISR("t", s.p, s.leader, 4)
		}, kerr.InvalidRequest},
		{"ISR naming a broker twice", 3, func(s setup) (int32, alterPartitionItem) {
			return s.leader, alterISR("t", s.p, s.leader, s.leader)
		}, kerr.InvalidRequest},
		{"unknown topic id", 2, func(s setup) (int32, alterPartitionItem) {
			item := alterISR("t", s.p, s.leader)
			item.id = metadata.TopicID{9, 9}
			return s.leader, item
		}, kerr.UnknownTopicID},
		{"unknown topic name", 1, func(s setup) (int32, alterPartitionItem) {
			item := alterISR("t", s.p, s.leader)
			item.topic = "nope"
			return s.leader, item
		}, kerr.UnknownTopicOrPartition},
		{"unknown partition", 3, func(s setup) (int32, alterPartitionItem) {
			item := alterISR("t", s.p, s.leader)
			item.partition = 7
			return s.leader, item
		}, kerr.UnknownTopicOrPartition},
	} {
		t.Run(tt.name, func(t *testing.T) {
			tc := newTestController(t, Config{}, 1, 2, 3, 4)
			var p *metadata.Partition
			// A partition on brokers 1-3, so that broker 4 is not a
			// replica of it.
			for attempt := 0; p == nil; attempt++ {
				name := "t"
				if attempt > 0 {
					tc.deleteTopics(name)
				}
				candidate := tc.mustCreate(name, 1, 3).Partitions[0]
				if !slices.Contains(candidate.Replicas, 4) {
					p = candidate
				}
			}
			s := setup{tc: tc, p: p, leader: p.Leader, follower: p.Replicas[1]}
			if s.follower == s.leader {
				s.follower = p.Replicas[0]
			}
			sender, item := tt.build(s)
			before := snapshotPartitions(p.Topic)
			proposals := len(tc.proposer.proposals)
			resp := tc.alterPartition(tt.version, sender, item)
			answer := resp.Topics[0].Partitions[0]
			requireErrorCode(t, tt.name, answer.ErrorCode, tt.want)
			if len(tc.proposer.proposals) != proposals || !slices.EqualFunc(before, snapshotPartitions(p.Topic), func(a, b partitionState) bool {
				return a.leader == b.leader && a.leaderEpoch == b.leaderEpoch && a.partitionEpoch == b.partitionEpoch && slices.Equal(a.isr, b.isr)
			}) {
				t.Fatal("a refused AlterPartition changed the partition")
			}
		})
	}
}

func TestAlterPartitionFromAStaleBrokerEpochIsRefusedWhole(t *testing.T) {
	tc := newTestController(t, Config{}, 1, 2)
	p := tc.mustCreate("t", 1, 2).Partitions[0]
	tc.epochs[p.Leader]--
	resp := tc.alterPartition(3, p.Leader, alterISR("t", p, p.Leader))
	if resp.ErrorCode != kerr.StaleBrokerEpoch.Code || len(resp.Topics) != 0 {
		t.Fatalf("answer %+v", resp)
	}
}

// requireErrorCode fails unless code is want's (0 for nil), for answers
// that carry no message.
func requireErrorCode(t *testing.T, what string, code int16, want *kerr.Error) {
	t.Helper()
	wantCode := int16(0)
	if want != nil {
		wantCode = want.Code
	}
	if code != wantCode {
		t.Fatalf("%s: got %v, want %v", what, kerr.ErrorForCode(code), want)
	}
}
