package controller

import (
	"slices"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"pgregory.net/rapid"

	"sluice/core/metadata"
)

// TestElectionsKeepTheirPromises drives a controller through random broker
// failures, returns, controlled shutdowns, restarts and ISR changes, and
// checks after every step what elections promise (elections.go):
//
//   - every ISR is non-empty and made of replicas;
//   - every leader is registered, unfenced and in its ISR;
//   - a partition is leaderless only when no ISR member may lead, and,
//     where the topic allows unclean elections, no replica at all;
//   - a leader from outside the ISR it replaced is marked an unclean
//     election (metadata.Partition.UncleanEpoch, its leader epoch), the
//     mark never goes back, and without the config there is none.
func TestElectionsKeepTheirPromises(t *testing.T) {
	checkElectionsKeepTheirPromises(t, false)
}

// TestElectionsKeepTheirPromisesUnderBuggify is the same with every
// BUGGIFY site firing: leaders are drawn among the eligible ISR members
// (controller-leader-not-preferred), and every promise still holds.
func TestElectionsKeepTheirPromisesUnderBuggify(t *testing.T) {
	checkElectionsKeepTheirPromises(t, true)
}

func checkElectionsKeepTheirPromises(t *testing.T, buggify bool) {
	rapid.Check(t, func(rt *rapid.T) {
		tc := newTestController(rt, Config{}, 1, 2, 3, 4)
		if buggify {
			tc.buggifyAll()
		}
		unclean := rapid.Bool().Draw(rt, "unclean")
		var configs []string
		if unclean {
			configs = []string{metadata.ConfigUncleanLeaderElection, "true"}
		}
		tc.mustCreate("t", 4, 3, configs...)
		for range rapid.IntRange(1, 25).Draw(rt, "steps") {
			before := partitionStates(tc.c.Image())
			id := rapid.Int32Range(1, 4).Draw(rt, "broker")
			switch rapid.IntRange(0, 4).Draw(rt, "action") {
			case 0:
				tc.heartbeat(id, heartbeatOptions{wantFence: true})
			case 1:
				tc.heartbeat(id, heartbeatOptions{})
			case 2:
				tc.randomAlterPartition(rt)
			case 3:
				tc.heartbeat(id, heartbeatOptions{wantShutdown: true})
			case 4:
				tc.expire(id)
				if resp := tc.register(id); resp.ErrorCode != 0 {
					rt.Fatalf("restarting broker %d: %v", id, kerr.ErrorForCode(resp.ErrorCode))
				}
			}
			requireLeadershipInvariants(rt, tc.c.Image())
			tc.requireLeaderlessOnlyWithoutCandidates(rt, unclean)
			requireUncleanElectionsMarked(rt, before, tc.c.Image(), unclean)
		}
	})
}

// partitionStates copies topic t's partitions as they stand.
func partitionStates(img *metadata.Image) []metadata.Partition {
	var states []metadata.Partition
	for _, p := range img.Topics["t"].Partitions {
		state := *p
		state.ISR = slices.Clone(p.ISR)
		states = append(states, state)
	}
	return states
}

// requireUncleanElectionsMarked checks one step's elections against the
// partitions before it (each step elects a partition's leader once at
// most).
func requireUncleanElectionsMarked(rt *rapid.T, before []metadata.Partition, img *metadata.Image, unclean bool) {
	for i, p := range img.Topics["t"].Partitions {
		was := before[i]
		switch {
		case p.UncleanEpoch < was.UncleanEpoch:
			rt.Fatalf("partition %d: unclean epoch went back from %d to %d", p.Index, was.UncleanEpoch, p.UncleanEpoch)
		case !unclean && p.UncleanEpoch != 0:
			rt.Fatalf("partition %d: unclean epoch %d without unclean elections allowed", p.Index, p.UncleanEpoch)
		case p.LeaderEpoch > was.LeaderEpoch && p.Leader >= 0 && !slices.Contains(was.ISR, p.Leader) && p.UncleanEpoch != p.LeaderEpoch:
			rt.Fatalf("partition %d: leader %d from outside the ISR %v in epoch %d, unclean epoch %d", p.Index, p.Leader, was.ISR, p.LeaderEpoch, p.UncleanEpoch)
		case p.UncleanEpoch > was.UncleanEpoch && (p.UncleanEpoch != p.LeaderEpoch || slices.Contains(was.ISR, p.Leader)):
			rt.Fatalf("partition %d: unclean epoch %d set for leader %d of epoch %d, from the ISR %v", p.Index, p.UncleanEpoch, p.Leader, p.LeaderEpoch, was.ISR)
		}
	}
}

// randomAlterPartition has a partition's leader ask for a random ISR that
// includes itself. Refusals are fine (a fenced member, a stale epoch);
// what matters is that an accepted change keeps the invariants.
func (tc *testController) randomAlterPartition(rt *rapid.T) {
	topic := tc.c.Image().Topics["t"]
	p := topic.Partitions[rapid.IntRange(0, len(topic.Partitions)-1).Draw(rt, "partition")]
	if p.Leader < 0 {
		return
	}
	isr := []int32{p.Leader}
	for _, r := range p.Replicas {
		if r != p.Leader && rapid.Bool().Draw(rt, "in isr") {
			isr = append(isr, r)
		}
	}
	resp := tc.alterPartition(3, p.Leader, alterISR("t", p, isr...))
	switch code := resp.Topics[0].Partitions[0].ErrorCode; code {
	case 0:
		if !slices.Equal(p.ISR, isr) {
			rt.Fatalf("accepted ISR %v, image has %v", isr, p.ISR)
		}
	case kerr.IneligibleReplica.Code:
	default:
		rt.Fatalf("AlterPartition from the leader: %v", kerr.ErrorForCode(code))
	}
}

// requireLeaderlessOnlyWithoutCandidates checks that no leaderless
// partition has a replica that could lead it.
func (tc *testController) requireLeaderlessOnlyWithoutCandidates(rt *rapid.T, unclean bool) {
	img := tc.c.Image()
	eligible := func(id int32) bool {
		b, registered := img.Brokers[id]
		return registered && !b.Fenced && !tc.c.isShuttingDown(id)
	}
	for _, p := range img.Topics["t"].Partitions {
		if p.Leader >= 0 {
			continue
		}
		for _, r := range p.Replicas {
			if eligible(r) && (unclean || slices.Contains(p.ISR, r)) {
				rt.Fatalf("partition %d is leaderless though broker %d could lead it (ISR %v, unclean %v)", p.Index, r, p.ISR, unclean)
			}
		}
	}
}
