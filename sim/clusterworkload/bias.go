package clusterworkload

import (
	"slices"
	"time"

	"sluice/core/broker"
	"sluice/core/controller"
	"sluice/core/group"
	"sluice/core/replica"
	"sluice/sim/kernel"
	"sluice/sim/scenario"
)

// When a planted bug is switched on, the swarm leans toward the faults
// that can expose it: each canary's seeds are still what is measured,
// drawn as always, then biased the same way every time. A scenario given
// in full (a file) is never biased.

// canaryBias adjusts one drawn scenario for one planted bug.
type canaryBias func(s *scenario.Scenario)

var canaryBiases = map[string]canaryBias{
	// Acknowledged writes only the leader has synced are lost when every
	// machine loses power before the followers sync and the leader comes
	// back too late to lead again: slow follower syncs, steady writes,
	// frequent power losses whose restarts are spread wider than a broker
	// session.
	replica.CanaryAcksBeforeFollowerSync: powerLosses,
	// The same, when no replica waits for its fsync.
	replica.CanaryAcksBeforeSync: powerLosses,
	// A commit from a stale generation needs a zombie: a consumer frozen
	// past its session while the group moves on.
	group.CanaryStaleGenerationCommit: func(s *scenario.Scenario) {
		setRate(s, scenario.KindClientPause, 1500*time.Millisecond)
		s.Faults.WindowMin, s.Faults.WindowMax = s.Timeouts.GroupSession, 3*s.Timeouts.GroupSession
		s.Schedule = scenario.GenerateSchedule(*s)
	},
	// An unclean election needs every ISR member down while a replica
	// that fell out of the ISR is up: followers cut off longer than the
	// replica lag, and leaders crashed often.
	controller.CanaryUncleanElection: func(s *scenario.Scenario) {
		s.Timeouts.ReplicaLag = 400 * time.Millisecond
		s.Faults.WindowMin, s.Faults.WindowMax = time.Second, 3*time.Second
		s.Faults.LeaderBias = 0.8
		setRate(s, scenario.KindCrash, time.Second)
		setRate(s, scenario.KindIsolate, 2*time.Second)
		s.Schedule = scenario.GenerateSchedule(*s)
	},
	// A stop's close order shows only when a broker stops gracefully:
	// controlled shutdowns every second or so.
	broker.CanaryClosesInMapOrder: func(s *scenario.Scenario) {
		setRate(s, scenario.KindShutdown, time.Second)
		s.Schedule = scenario.GenerateSchedule(*s)
	},
	// The other replication bugs show when leadership moves: crash and
	// cut off leaders.
	replica.CanaryHighWatermarkWithoutISR: leaderFaults,
	replica.CanaryTruncateToHighWatermark: leaderFaults,
	replica.CanaryReadAboveHighWatermark:  leaderFaults,
	// Deleted records come back when a follower that had not followed
	// the deletion takes over: deletions of what the group consumed, and
	// leaders crashed and cut off.
	// A deleted topic's directory is taken for the new topic's by a node
	// down across the deletion and the re-creation: an operator
	// re-creating a topic every node hosts, and nodes crashed often.
	replica.CanaryIgnoreTopicID: func(s *scenario.Scenario) {
		recreated := slices.IndexFunc(s.Topics, func(t scenario.Topic) bool { return t.Recreated() })
		if recreated < 0 {
			s.Topics = append(s.Topics, scenario.Topic{Name: scenario.RecreatedTopicName, Partitions: 1})
			recreated = len(s.Topics) - 1
		}
		t := &s.Topics[recreated]
		t.Replication, t.MinInsync, t.RecreateEvery = min(3, s.Cluster.Nodes), 1, 500*time.Millisecond
		setRate(s, scenario.KindCrash, time.Second)
		s.Schedule = scenario.GenerateSchedule(*s)
	},
	// A preferred replica out of the ISR needs an operator electing
	// while it has fallen behind yet stays unfenced: leaders crashed (the
	// preferred one loses its leadership), and nodes paused longer than
	// the replica lag but not the broker session.
	controller.CanaryPreferredOutsideISR: func(s *scenario.Scenario) {
		for i := range s.Topics {
			if !s.Topics[i].Recreated() && s.Clients.Uses(s.Topics[i].Name) {
				s.Topics[i].ElectEvery = 200 * time.Millisecond
			}
		}
		s.Timeouts.ReplicaLag = 200 * time.Millisecond
		s.Timeouts.BrokerSession = max(s.Timeouts.BrokerSession, 2*time.Second)
		s.Faults.WindowMin, s.Faults.WindowMax = 400*time.Millisecond, 1500*time.Millisecond
		s.Faults.LeaderBias = 0.2
		setRate(s, scenario.KindCrash, 2*time.Second)
		setRate(s, scenario.KindPause, 700*time.Millisecond)
		s.Schedule = scenario.GenerateSchedule(*s)
	},
	// An answer sent before a Produce's last partition is handled needs
	// Produces of several partitions, one of them a retry of a batch
	// already committed: producers that linger and send often, and
	// connections reset under them so that answers are lost.
	broker.CanaryProduceAnsweredEarly: func(s *scenario.Scenario) {
		for i := range s.Clients.Producers {
			s.Clients.Producers[i].Linger = 50 * time.Millisecond
		}
		s.Timeouts.Think = 100 * time.Millisecond
		setRate(s, scenario.KindReset, time.Second)
		s.Schedule = scenario.GenerateSchedule(*s)
	},
	// A new leader that forgot its producers appends a retry again: an
	// idempotent producer whose answer was lost (a connection reset)
	// just before its leader lost the leadership (leaders crashed and
	// cut off).
	replica.CanaryFollowerForgetsProducers: func(s *scenario.Scenario) {
		for i := range s.Clients.Producers {
			s.Clients.Producers[i].Idempotent = true
			s.Clients.Producers[i].Acks = -1
		}
		s.Faults.LeaderBias = 0.8
		setRate(s, scenario.KindCrash, 2*time.Second)
		setRate(s, scenario.KindIsolate, 3*time.Second)
		setRate(s, scenario.KindReset, time.Second)
		s.Schedule = scenario.GenerateSchedule(*s)
	},
	// Reads past the lease need a leader stranded from the other nodes
	// longer than its session while clients still reach it, and a
	// successor that moves on meanwhile.
	broker.CanaryReadsPastLease: strandedCoordinator,
	// A lease outlasting the fencing needs the stranded coordinator's
	// clock slow and the controller's fast (every node's clock at one
	// extreme of the drift or the other), and an offset fetch in the gap
	// between the fencing and the lease's end, an eighth of a session:
	// a long session widens it.
	broker.CanaryLeaseOutlastsFencing:          slowStrandedCoordinator,
	replica.CanaryTakeoverIgnoresFormerLeaders: movedStrandedCoordinator,
	// A deposed broker found caught up from any heartbeat needs one whose
	// heartbeats reach the controller while nothing reaches it.
	controller.CanaryCaughtUpBeforeCaughtUp: movedDeafCoordinator,
	// A broker unfenced on a stale image is one that comes back from
	// such a strand: the same lean.
	controller.CanaryUnfenceBeforeCaughtUp: strandedCoordinator,
	// Retention past the high watermark needs segments that roll while
	// followers lag behind them, and retention by size often: small
	// segments, a small retention, frequent checks, and followers slowed
	// (slow disks, pauses, one-way cuts) without leaving the ISR at once.
	replica.CanaryRetentionAboveHighWatermark: func(s *scenario.Scenario) {
		s.Logs.SegmentBytes, s.Logs.RetentionBytes, s.Logs.RetentionCheck = 256, 512, 200*time.Millisecond
		s.Timeouts.ReplicaLag = 2 * time.Second
		s.Timeouts.Think = 50 * time.Millisecond
		s.Faults.LeaderBias = 0.1
		setRate(s, scenario.KindSlowDisk, time.Second)
		setRate(s, scenario.KindCutTo, 2*time.Second)
		s.Schedule = scenario.GenerateSchedule(*s)
	},
	// A reassignment completed too early needs reassignments: of the
	// topic the group reads, often.
	controller.CanaryReassignBeforeCaughtUp: func(s *scenario.Scenario) {
		for i := range s.Topics {
			if s.Topics[i].Name == s.Clients.Groups[0].Topic {
				s.Topics[i].ReassignEvery = 500 * time.Millisecond
			}
		}
	},
	// A subscription change matters in a stable group only to a
	// cooperative member giving partitions up to one that joined: a
	// member down past its session, whose partitions the others took,
	// coming back.
	group.CanaryRejoinIgnoresSubscription: func(s *scenario.Scenario) {
		s.Clients.Groups[0].Balancer = scenario.BalancerCooperative
		s.Faults.WindowMin, s.Faults.WindowMax = 2*s.Timeouts.GroupSession, 4*s.Timeouts.GroupSession
		setRate(s, scenario.KindClientCrash, 3*time.Second)
		s.Schedule = scenario.GenerateSchedule(*s)
	},
	replica.CanaryDeleteWithoutFollowers: func(s *scenario.Scenario) {
		for i := range s.Topics {
			if s.Topics[i].Name == s.Clients.Groups[0].Topic {
				s.Topics[i].DeleteEvery = 400 * time.Millisecond
			}
		}
		leaderFaults(s)
	},
}

// strandedCoordinator leans toward a broker stranded from the others
// longer than its session while clients still reach it, and successors
// that move on meanwhile: deletions of what the group consumed, and
// commits, which a lag monitor keeps reading from the coordinator it
// found; every other strand aims at the group's coordinator.
func strandedCoordinator(s *scenario.Scenario) {
	s.Clients.Groups[0].OffsetReaders = max(s.Clients.Groups[0].OffsetReaders, 1)
	for i := range s.Topics {
		if s.Topics[i].Name == s.Clients.Groups[0].Topic {
			s.Topics[i].DeleteEvery = 400 * time.Millisecond
		}
	}
	s.Faults.LeaderBias = 0.9
	s.Faults.WindowMin, s.Faults.WindowMax = 2*s.Timeouts.BrokerSession, 4*s.Timeouts.BrokerSession
	setRate(s, scenario.KindStrand, 2*time.Second)
	s.Schedule = scenario.GenerateSchedule(*s)
	// Every other strand aims at the group's coordinator, which
	// answers its members' offset fetches.
	strands := 0
	for i := range s.Schedule {
		if e := &s.Schedule[i]; e.Kind == scenario.KindStrand {
			if strands%2 == 0 {
				e.Target = scenario.Target{Role: scenario.RoleCoordinator}
			}
			strands++
		}
	}
}

// movedStrandedCoordinator strands the group's coordinator, which keeps
// its lease for half a (long) session, and moves leaderships away from it
// meanwhile without fencing it: reassignments of the group's topic and of
// __consumer_offsets every few hundred milliseconds and a leader rebalance
// every second, on five nodes so that a move can leave it out, with
// offset readers to ask it and its successor.
func movedStrandedCoordinator(s *scenario.Scenario) { movedCoordinator(s, scenario.KindStrand) }

// movedDeafCoordinator is movedStrandedCoordinator with the coordinator
// cut off one way only: the other nodes' messages do not reach it, so it
// learns of no deposition and its lease is not renewed, while its
// heartbeats still reach the controller and keep it unfenced.
func movedDeafCoordinator(s *scenario.Scenario) { movedCoordinator(s, scenario.KindCutTo) }

// movedCoordinator cuts the group's coordinator off from the other nodes
// by faults of kind cut and moves its partitions meanwhile (see
// movedStrandedCoordinator).
func movedCoordinator(s *scenario.Scenario, cut scenario.Kind) {
	if len(s.ClockRates) > 0 {
		s.ClockRates = append(s.ClockRates, 1, 1, 1, 1, 1)[:5]
	}
	s.Cluster.Nodes = 5
	s.Cluster.LeaderRebalanceEvery = time.Second
	s.Timeouts.BrokerSession, s.Timeouts.BrokerHeartbeat = 8*time.Second, time.Second
	s.Clients.Groups[0].OffsetReaders = max(s.Clients.Groups[0].OffsetReaders, 2)
	for i := range s.Topics {
		if s.Topics[i].Name == s.Clients.Groups[0].Topic {
			s.Topics[i].ReassignEvery = 150 * time.Millisecond
		}
	}
	s.Rates = nil
	setRate(s, cut, 2*time.Second)
	s.Faults.WindowMin, s.Faults.WindowMax = 3*time.Second, 5*time.Second
	s.Schedule = scenario.GenerateSchedule(*s)
	for i := range s.Schedule {
		if e := &s.Schedule[i]; e.Kind == cut {
			e.Target = scenario.Target{Role: scenario.RoleCoordinator}
		}
	}
}

// slowStrandedCoordinator strands the group's coordinator for longer than
// a broker session (a long one, 5 s, so that the gap between its fencing
// and its lease's end is wide enough for an offset fetch to land in), on
// five nodes whose clocks run at one extreme of the drift or the other,
// with the coordinator's drifted to the slow end and the controller's to
// the fast one. No other faults: a crash or a cut would move the
// coordinator or the controller away from the clocks set for them.
func slowStrandedCoordinator(s *scenario.Scenario) {
	s.Cluster.Nodes = 5
	clocksAtDriftExtremes(s)
	s.Timeouts.BrokerSession, s.Timeouts.BrokerHeartbeat = 5*time.Second, time.Second
	s.Clients.Groups[0].OffsetReaders = max(s.Clients.Groups[0].OffsetReaders, 2)
	s.Rates = nil
	setRate(s, scenario.KindStrand, 4*time.Second)
	s.Faults.WindowMin, s.Faults.WindowMax = s.Timeouts.BrokerSession*6/5, s.Timeouts.BrokerSession*8/5
	s.Schedule = scenario.GenerateSchedule(*s)
	for i := range s.Schedule {
		if e := &s.Schedule[i]; e.Kind == scenario.KindStrand {
			e.Target = scenario.Target{Role: scenario.RoleCoordinator}
		}
	}
	// And whichever nodes coordinate and control once the group has
	// formed, slow and fast for the whole safety phase.
	drifts := []scenario.Event{
		{At: slowStrandedCoordinatorDriftAt, Kind: scenario.KindClockDrift, Target: scenario.Target{Role: scenario.RoleCoordinator}, Rate: scenario.DriftRateMin, For: s.Safety},
		{At: slowStrandedCoordinatorDriftAt, Kind: scenario.KindClockDrift, Target: scenario.Target{Role: scenario.RoleController}, Rate: scenario.DriftRateMax, For: s.Safety},
	}
	s.Schedule = append(drifts, s.Schedule...)
	scenario.SortEvents(s.Schedule)
}

// slowStrandedCoordinatorDriftAt is when slowStrandedCoordinator's drifts
// begin: after the group has found its coordinator.
const slowStrandedCoordinatorDriftAt = 500 * time.Millisecond

// clocksAtDriftExtremes runs each node's clock at the slowest or the
// fastest rate a drift reaches, drawn per node from the seed, so that two
// nodes' clocks differ by as much as the simulator lets them.
func clocksAtDriftExtremes(s *scenario.Scenario) {
	rng := kernel.NewRand(s.Seed, "scenario/bias-clocks")
	s.ClockRates = make([]float64, 0, s.Cluster.Nodes)
	for range s.Cluster.Nodes {
		rate := scenario.DriftRateMin
		if rng.IntN(2) == 0 {
			rate = scenario.DriftRateMax
		}
		s.ClockRates = append(s.ClockRates, rate)
	}
}

// powerLosses leans toward losing every machine's unsynced writes at once.
func powerLosses(s *scenario.Scenario) {
	s.Disk.SyncLatencyMin, s.Disk.SyncLatencyMax = 10*time.Millisecond, 40*time.Millisecond
	s.Timeouts.Think = 50 * time.Millisecond
	setRate(s, scenario.KindPowerLoss, time.Second)
	s.Schedule = scenario.GenerateSchedule(*s)
	for i := range s.Schedule {
		if e := &s.Schedule[i]; e.Kind == scenario.KindPowerLoss {
			e.For = min(e.For, 300*time.Millisecond)
			e.Stagger = 3 * s.Timeouts.BrokerSession
		}
	}
}

func leaderFaults(s *scenario.Scenario) {
	s.Faults.LeaderBias = 0.8
	setRate(s, scenario.KindCrash, 2*time.Second)
	setRate(s, scenario.KindIsolate, 3*time.Second)
	s.Schedule = scenario.GenerateSchedule(*s)
}

// setRate switches a fault kind on at a mean interval, keeping the rates
// in their order.
func setRate(s *scenario.Scenario, kind scenario.Kind, mean time.Duration) {
	rates := slices.DeleteFunc(slices.Clone(s.Rates), func(r scenario.Rate) bool { return r.Kind == kind })
	rates = append(rates, scenario.Rate{Kind: kind, Mean: mean})
	order := scenario.Kinds()
	slices.SortStableFunc(rates, func(a, b scenario.Rate) int {
		return slices.Index(order, a.Kind) - slices.Index(order, b.Kind)
	})
	s.Rates = rates
}

// biased returns the scenario a seed draws when the given canaries are
// on.
func biased(s scenario.Scenario, canaries []string) scenario.Scenario {
	for _, name := range canaries {
		if bias, ok := canaryBiases[name]; ok {
			bias(&s)
		}
	}
	return s
}
