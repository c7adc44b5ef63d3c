package controller

import (
	"testing"
)

func TestPlacementSpreadsLeadersEvenly(t *testing.T) {
	tc := newTestController(t, Config{}, 1, 2, 3)
	for _, replicationFactor := range []int16{1, 2, 3} {
		topic := tc.mustCreate("spread"+string(rune('0'+replicationFactor)), 6, replicationFactor)
		leaders := map[int32]int{}
		for _, p := range topic.Partitions {
			leaders[p.Leader]++
			if len(p.Replicas) != int(replicationFactor) {
				t.Fatalf("partition %d has %d replicas, want %d", p.Index, len(p.Replicas), replicationFactor)
			}
		}
		for _, id := range []int32{1, 2, 3} {
			if leaders[id] != 2 {
				t.Fatalf("replication factor %d: leaders %v, want each broker to lead 2", replicationFactor, leaders)
			}
		}
	}
}

// TestPlacementNeverRepeatsABroker checks every small shape exhaustively:
// no partition has two replicas on one broker, leaders take turns, and
// every broker holds the same number of replicas give or take one round.
func TestPlacementNeverRepeatsABroker(t *testing.T) {
	for n := 1; n <= 7; n++ {
		brokers := make([]int32, n)
		for i := range brokers {
			brokers[i] = int32(10 + i)
		}
		for replicationFactor := 1; replicationFactor <= n; replicationFactor++ {
			for start := 0; start < n; start++ {
				for shift := 0; shift < n; shift++ {
					for first := int32(0); first < 3; first++ {
						count := int32(3 * n)
						spec := placementSpec{brokers: brokers, firstPartition: first, count: count,
							replicationFactor: replicationFactor, startIndex: start, shift: shift}
						assignments := spec.place()
						if len(assignments) != int(count) {
							t.Fatalf("%+v: %d assignments", spec, len(assignments))
						}
						leaders := map[int32]int{}
						for i, replicas := range assignments {
							seen := map[int32]bool{}
							for _, r := range replicas {
								if seen[r] {
									t.Fatalf("%+v: partition %d has replicas %v", spec, i, replicas)
								}
								seen[r] = true
							}
							if len(replicas) != replicationFactor {
								t.Fatalf("%+v: partition %d has %d replicas", spec, i, len(replicas))
							}
							leaders[replicas[0]]++
							if want := brokers[(int(first)+i+start)%n]; replicas[0] != want {
								t.Fatalf("%+v: partition %d led by %d, want %d", spec, i, replicas[0], want)
							}
						}
						for _, id := range brokers {
							if leaders[id] != 3 {
								t.Fatalf("%+v: leaders %v", spec, leaders)
							}
						}
					}
				}
			}
		}
	}
}

func TestPlacementUsesOnlyUnfencedBrokers(t *testing.T) {
	tc := newTestController(t, Config{}, 1, 2, 3, 4)
	tc.fence(2)
	topic := tc.mustCreate("healthy", 12, 3)
	for _, p := range topic.Partitions {
		for _, r := range p.Replicas {
			if r == 2 {
				t.Fatalf("partition %d placed on fenced broker 2: %v", p.Index, p.Replicas)
			}
		}
	}
}
