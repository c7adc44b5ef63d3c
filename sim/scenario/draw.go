package scenario

import (
	"fmt"
	"math"
	"time"

	"sluice/sim/kernel"
)

// random is the part of a kernel.NewRand stream drawing uses.
type random interface {
	IntN(n int) int
	Int64N(n int64) int64
	Float64() float64
}

// What the swarm draws from. The floors of the default scenario hold for
// every seed: at least 3 nodes, a topic of at least 3 partitions replicated
// 3 ways, 2 producers, a group of 2 consumers, at least 3 faults, and a
// safety phase long enough that, with the liveness phase, a run lasts at
// least 10 simulated seconds.
const (
	drawNodesMin            = 3
	drawNodesMax            = 5
	drawOrdersPartitionsMin = 3
	drawOrdersPartitionsMax = 4
	drawSecondTopicChance   = 0.35
	drawSecondPartitionsMax = 3
	drawPageCacheChance     = 0.4
	drawUncleanChance       = 0.15
	drawMinInsyncOneChance  = 0.2
	drawAcksOneChance       = 0.25
	drawIdempotentChance    = 0.5
	drawSubsetChance        = 0.3
	drawThirdProducerChance = 0.3
	drawGroupMembersMax     = 3
	drawOffsetReaderChance  = 0.25
	drawOffsetsPartitions   = 3
	// drawMetadataSnapshotChance of runs snapshot their metadata every
	// drawMetadataSnapshotEveryMin to Max committed records.
	drawMetadataSnapshotChance   = 0.5
	drawMetadataSnapshotEveryMin = 8
	// drawLeaderRebalanceChance of runs rebalance leaders every
	// drawLeaderRebalanceEveryMin to Max seconds.
	drawLeaderRebalanceChance    = 0.25
	drawLeaderRebalanceEveryMin  = 1
	drawLeaderRebalanceEveryMax  = 4
	drawMetadataSnapshotEveryMax = 64
	// drawSegmentsSmallChance of runs roll their topics' segments, and
	// (drawn apart) __consumer_offsets', every drawSegmentBytesMin to Max
	// bytes: one batch to a score of them.
	drawSegmentsSmallChance = 0.5
	drawSegmentBytesMin     = 256
	drawSegmentBytesMax     = 2048
	// drawRetentionCheckChance of runs run retention, compaction and
	// producer expiry every drawRetentionCheckMin to Max.
	drawRetentionCheckChance = 0.6
	drawRetentionCheckMin    = 200 * time.Millisecond
	drawRetentionCheckMax    = 2 * time.Second
	// drawRetentionBytesChance of the runs that roll segments and run
	// retention also delete by size: they keep drawRetentionSegmentsMin
	// to Max segments' worth of each partition.
	drawRetentionBytesChance = 0.25
	drawRetentionSegmentsMin = 2
	drawRetentionSegmentsMax = 4
	// drawGrowChance of runs add drawGrowMin to Max partitions to one
	// topic, at a time drawn between drawGrowFromMin and Max of the way
	// through the safety phase.
	drawGrowChance = 0.3
	// drawStaticGroupChance of runs make their group's members static.
	drawStaticGroupChance = 0.3
	// drawCooperativeChance of runs have their group rebalance
	// cooperatively, and drawUpgradeChance have it half upgraded to it
	// (see Balancer).
	drawCooperativeChance = 0.3
	drawUpgradeChance     = 0.15
	// drawDeleteChance of runs have an operator delete what the group
	// consumed, every drawDeleteEveryMin to Max.
	drawDeleteChance = 0.25
	// drawRecreateChance of runs have an operator delete a topic of its
	// own and create it again, every drawRecreateEveryMin to Max, on at
	// most drawRecreatePartitionsMax partitions.
	drawRecreateChance        = 0.25
	drawRecreateEveryMin      = 500 * time.Millisecond
	drawRecreateEveryMax      = 3 * time.Second
	drawRecreatePartitionsMax = 3
	drawDeleteEveryMin        = 300 * time.Millisecond
	// drawAlterChance of runs have an operator alter the configs of a
	// topic the clients use, every drawAlterEveryMin to Max.
	drawAlterChance   = 0.25
	drawAlterEveryMin = 300 * time.Millisecond
	drawAlterEveryMax = 2500 * time.Millisecond
	// drawElectChance of runs have an operator run leader elections for
	// a topic the clients use, every drawElectEveryMin to Max.
	drawElectChance   = 0.2
	drawElectEveryMin = 300 * time.Millisecond
	drawElectEveryMax = 2500 * time.Millisecond
	// drawLingerChance of producers linger drawLingerMin to Max.
	drawLingerChance = 0.5
	drawLingerMin    = 5 * time.Millisecond
	drawLingerMax    = 100 * time.Millisecond
	// drawBatchChance of producers send batches of up to 2 to
	// drawBatchMax records; drawCompressChance compress their batches
	// with one of Kafka's codecs.
	drawBatchChance    = 0.5
	drawBatchMax       = 8
	drawCompressChance = 0.3
	// drawInFlightChance of idempotent producers keep 2 to inFlightMax
	// sends in flight per partition.
	drawInFlightChance = 0.5
	// drawReassignChance of runs have an operator reassign partitions of
	// a topic the clients use, every drawReassignEveryMin to Max.
	drawReassignChance    = 0.2
	drawReassignEveryMin  = 500 * time.Millisecond
	drawReassignEveryMax  = 3 * time.Second
	drawDeleteEveryMax    = 3 * time.Second
	drawGrowMin           = 1
	drawGrowMax           = 2
	drawGrowFromMin       = 0.15
	drawGrowFromMax       = 0.75
	drawDriftChance       = 0.4
	drawDriftMax          = 0.02
	drawBuggifyChance     = 0.5
	drawBuggifyChanceMax  = 0.5
	drawTornWriteChance   = 0.5
	drawReadCorruptionMax = 0.002
	drawSyncFailureMax    = 0.001
	drawSafetyMin         = 9 * time.Second
	drawSafetyMax         = 12 * time.Second
	drawLiveness          = 40 * time.Second
	// drawOperations is the default scenario's floor of client
	// operations, which the safety phase waits for.
	drawOperations = 200
	drawFaultsMin  = 3
	drawThinkMin   = 800 * time.Millisecond
	drawThinkMax   = 2 * time.Second
	// drawSendsMin is the fewest sends the producers' lanes are expected
	// to make in the safety phase (a lane pauses Think/2 on average
	// between sends): half the floor of client operations, the readers'
	// polls and the group's polls and commits making the rest. A run
	// whose faults held its clients back waits for the floor
	// (Scenario.Operations).
	drawSendsMin       = 100
	drawWindowMin      = 200 * time.Millisecond
	drawWindowMaxMin   = 600 * time.Millisecond
	drawWindowMaxMax   = 2500 * time.Millisecond
	drawClockJumpMin   = time.Second
	drawClockJumpMax   = time.Minute
	drawSlowSyncMinMin = 10 * time.Millisecond
	drawSlowSyncMinMax = 30 * time.Millisecond
	drawSlowSyncMaxMax = 300 * time.Millisecond
)

// Controlled shutdowns: on in a fifth of the runs, one every 3 to 8 s on
// average, each node down for a fault window once it has stopped.
const (
	drawShutdownChance  = 0.2
	drawShutdownMeanMin = 3 * time.Second
	drawShutdownMeanMax = 8 * time.Second
)

// A slow network: on in a fifth of the runs, a window every 2 to 6 s on
// average, each delaying a node's segments by 20-200 ms at least and up
// to 1 s: past the swarm's request timeouts' lower end (500 ms), so some
// requests time out at the client and still arrive.
const (
	drawSlowNetChance        = 0.2
	drawSlowNetMeanMin       = 2 * time.Second
	drawSlowNetMeanMax       = 6 * time.Second
	drawSlowNetLatencyMinMin = 20 * time.Millisecond
	drawSlowNetLatencyMinMax = 200 * time.Millisecond
	drawSlowNetLatencyMaxMax = time.Second
)

// DriftRateMin and DriftRateMax bound the rate a clock-drift fault runs a
// node's clock at. The timing arguments in core/ (a broker's read lease, the
// controller's leadership lease) must hold for any two clocks in between.
const (
	DriftRateMin = 0.8
	DriftRateMax = 1.25
)

// Draw makes the scenario of a seed: the swarm's choice of cluster,
// topics, clients, timeouts, conditions, fault rates and schedule.
func Draw(seed uint64) Scenario {
	rng := kernel.NewRand(seed, "scenario/draw")
	s := Scenario{Workload: WorkloadCluster, Seed: seed}
	s.Cluster.Nodes = drawNodesMin + rng.IntN(drawNodesMax-drawNodesMin+1)
	s.Cluster.OffsetsPartitions = 1 + rng.IntN(drawOffsetsPartitions)
	s.Topics = drawTopics(rng, s.Cluster.Nodes)
	s.Clients = drawClients(rng, s.Topics)
	// From a stream of its own, added later: drawing it moved nothing
	// else any seed draws.
	if kernel.NewRand(seed, "scenario/draw-offset-readers").Float64() < drawOffsetReaderChance {
		s.Clients.Groups[0].OffsetReaders = 1
	}
	if kernel.NewRand(seed, "scenario/draw-static-groups").Float64() < drawStaticGroupChance {
		s.Clients.Groups[0].Static = true
	}
	s.Clients.Groups[0].Balancer = drawBalancer(kernel.NewRand(seed, "scenario/draw-group-balancer"))
	s.Cluster.MetadataSnapshotEvery = drawMetadataSnapshotEvery(kernel.NewRand(seed, "scenario/draw-metadata-snapshots"))
	s.Cluster.LeaderRebalanceEvery = drawLeaderRebalanceEvery(kernel.NewRand(seed, "scenario/draw-leader-rebalance"))
	s.Logs = drawLogs(kernel.NewRand(seed, "scenario/draw-logs"))
	s.Timeouts = drawTimeouts(rng)
	s.Network.LatencyMin = roundMicro(kernel.Between(rng, 0, 500*time.Microsecond))
	s.Network.LatencyMax = s.Network.LatencyMin + roundMicro(kernel.Between(rng, 100*time.Microsecond, 3*time.Millisecond))
	s.Disk = drawDisk(rng)
	for range s.Cluster.Nodes {
		rate := 1.0
		if rng.Float64() < drawDriftChance {
			rate = roundChance(1 + (2*rng.Float64()-1)*drawDriftMax)
		}
		s.ClockRates = append(s.ClockRates, rate)
	}
	if rng.Float64() < drawBuggifyChance {
		s.Buggify = Buggify{Enable: roundChance(rng.Float64() * drawBuggifyChanceMax), Fire: roundChance(rng.Float64() * drawBuggifyChanceMax)}
	}
	s.Safety = roundMilli(kernel.Between(rng, drawSafetyMin, drawSafetyMax))
	drawGrowth(kernel.NewRand(seed, "scenario/draw-growth"), s.Topics, s.Safety)
	drawDeletes(kernel.NewRand(seed, "scenario/draw-deletes"), &s)
	drawRecreates(kernel.NewRand(seed, "scenario/draw-recreates"), &s)
	drawAlters(kernel.NewRand(seed, "scenario/draw-alters"), &s)
	drawElections(kernel.NewRand(seed, "scenario/draw-elections"), &s)
	drawReassignments(kernel.NewRand(seed, "scenario/draw-reassignments"), &s)
	drawLinger(kernel.NewRand(seed, "scenario/draw-linger"), &s)
	drawBatching(kernel.NewRand(seed, "scenario/draw-batching"), &s)
	drawInFlight(kernel.NewRand(seed, "scenario/draw-in-flight"), &s)
	s.Timeouts.Think = min(s.Timeouts.Think, thinkForSends(s, drawSendsMin))
	s.Operations = drawOperations
	s.Liveness = drawLiveness
	s.Faults = FaultShape{
		WindowMin:  drawWindowMin,
		WindowMax:  roundMilli(kernel.Between(rng, drawWindowMaxMin, drawWindowMaxMax)),
		LeaderBias: roundChance(rng.Float64()),
	}
	for _, d := range kindDraws {
		if rng.Float64() < d.chance {
			rate := Rate{Kind: d.kind, Mean: roundMilli(kernel.Between(rng, d.low, d.high))}
			if d.kind == KindHeal && !hasNetworkRate(s.Rates) {
				continue // nothing for it to end
			}
			s.Rates = append(s.Rates, rate)
		}
	}
	if len(s.Rates) == 0 {
		// Every run injects faults: a seed that switched every kind
		// off gets one kind back: not a heal, which alone does nothing
		// (it is the last of kindDraws).
		d := kindDraws[rng.IntN(len(kindDraws)-1)]
		s.Rates = []Rate{{Kind: d.kind, Mean: roundMilli(kernel.Between(rng, d.low, d.high))}}
	}
	// From a stream of its own, added later: the seeds that do not draw
	// it kept their runs (it is the last kind, so its events are drawn
	// after every other kind's).
	if slow := kernel.NewRand(seed, "scenario/draw-slow-net"); slow.Float64() < drawSlowNetChance {
		s.Rates = append(s.Rates, Rate{Kind: KindSlowNet, Mean: roundMilli(kernel.Between(slow, drawSlowNetMeanMin, drawSlowNetMeanMax))})
	}
	// Controlled shutdowns, later still, from a stream of their own too.
	if stop := kernel.NewRand(seed, "scenario/draw-shutdown"); stop.Float64() < drawShutdownChance {
		s.Rates = append(s.Rates, Rate{Kind: KindShutdown, Mean: roundMilli(kernel.Between(stop, drawShutdownMeanMin, drawShutdownMeanMax))})
	}
	s.Schedule = GenerateSchedule(s)
	return mustValid(s)
}

// drawLeaderRebalanceEvery draws, in some runs, how often the controller
// moves leaders back to their preferred replicas: whole seconds, from
// drawLeaderRebalanceEveryMin to Max, so it happens several times a run
// while the faults move them away.
func drawLeaderRebalanceEvery(rng random) time.Duration {
	if rng.Float64() >= drawLeaderRebalanceChance {
		return 0
	}
	return time.Duration(drawLeaderRebalanceEveryMin+rng.IntN(drawLeaderRebalanceEveryMax-drawLeaderRebalanceEveryMin+1)) * time.Second
}

// drawMetadataSnapshotEvery draws how often the nodes snapshot their
// metadata. The broker's default (20,000 records) is never reached in a
// run of seconds, so without this the swarm would never take a snapshot,
// move a metadata log's start past a lagging node, or make one catch up
// by FetchSnapshot and rebuild its image from the snapshot. A run commits
// tens to hundreds of metadata records (registrations, topics, fencing,
// ISR changes, elections), so every few dozen records gives several.
func drawMetadataSnapshotEvery(rng random) int {
	if rng.Float64() >= drawMetadataSnapshotChance {
		return 0
	}
	return drawMetadataSnapshotEveryMin + rng.IntN(drawMetadataSnapshotEveryMax-drawMetadataSnapshotEveryMin+1)
}

// drawLogs draws log settings small enough that a run of seconds rolls
// segments (so reads, recovery, truncation and replication cross segment
// boundaries) and compacts __consumer_offsets (so a coordinator that takes
// over a group loads its offsets from a cleaned log), and in some runs
// deletes by retention (so the log start moves under readers and
// followers). Each is left at the broker's default in some runs.
func drawLogs(rng random) Logs {
	var l Logs
	if rng.Float64() < drawSegmentsSmallChance {
		l.SegmentBytes = drawSegmentBytesMin + rng.IntN(drawSegmentBytesMax-drawSegmentBytesMin+1)
	}
	if rng.Float64() < drawSegmentsSmallChance {
		l.OffsetsSegmentBytes = drawSegmentBytesMin + rng.IntN(drawSegmentBytesMax-drawSegmentBytesMin+1)
	}
	if rng.Float64() < drawRetentionCheckChance {
		l.RetentionCheck = roundMilli(kernel.Between(rng, drawRetentionCheckMin, drawRetentionCheckMax))
	}
	// Drawn last, so that every seed draws the rest as before. Retention
	// only deletes whole segments, at a retention check, so it needs both.
	if l.SegmentBytes != 0 && l.RetentionCheck != 0 && rng.Float64() < drawRetentionBytesChance {
		segments := drawRetentionSegmentsMin + rng.IntN(drawRetentionSegmentsMax-drawRetentionSegmentsMin+1)
		l.RetentionBytes = segments * l.SegmentBytes
	}
	return l
}

func drawTopics(rng random, nodes int) []Topic {
	orders := Topic{
		Name:        "orders",
		Partitions:  drawOrdersPartitionsMin + rng.IntN(drawOrdersPartitionsMax-drawOrdersPartitionsMin+1),
		Replication: 3,
		MinInsync:   2,
	}
	if rng.Float64() < drawMinInsyncOneChance {
		orders.MinInsync = 1
	}
	topics := []Topic{orders}
	if rng.Float64() < drawSecondTopicChance {
		events := Topic{Name: "events", Partitions: 1 + rng.IntN(drawSecondPartitionsMax)}
		events.Replication = 2 + rng.IntN(min(3, nodes)-1)
		events.MinInsync = 1 + rng.IntN(events.Replication)
		events.PageCache = rng.Float64() < drawPageCacheChance
		events.Unclean = rng.Float64() < drawUncleanChance
		topics = append(topics, events)
	}
	return topics
}

func drawClients(rng random, topics []Topic) Clients {
	var c Clients
	producer := func(name string, topic Topic) Producer {
		p := Producer{Name: name, Topic: topic.Name, Acks: -1, Idempotent: rng.Float64() < drawIdempotentChance}
		if rng.Float64() < drawAcksOneChance {
			p.Acks = 1
		}
		if rng.Float64() < drawSubsetChance {
			p.Partitions = subset(rng, topic.Partitions)
		}
		return p
	}
	c.Producers = append(c.Producers, producer("p1", topics[0]), producer("p2", topics[0]))
	if len(topics) > 1 {
		c.Producers = append(c.Producers, producer("p3", topics[1]))
		c.Readers = append(c.Readers, Reader{Name: "r2", Topic: topics[1].Name})
	} else if rng.Float64() < drawThirdProducerChance {
		c.Producers = append(c.Producers, producer("p3", topics[0]))
	}
	c.Readers = append([]Reader{{Name: "r1", Topic: topics[0].Name}}, c.Readers...)
	c.Groups = []Group{{Name: "g1", Topic: topics[0].Name, Members: 2 + rng.IntN(drawGroupMembersMax-1)}}
	return c
}

func drawTimeouts(rng random) Timeouts {
	var t Timeouts
	t.Election = roundMilli(kernel.Between(rng, 100*time.Millisecond, 300*time.Millisecond))
	t.QuorumFetch = t.Election * time.Duration(2+rng.IntN(3))
	t.BrokerHeartbeat = roundMilli(kernel.Between(rng, 100*time.Millisecond, 400*time.Millisecond))
	t.BrokerSession = max(t.BrokerHeartbeat*time.Duration(3+rng.IntN(4)), 600*time.Millisecond)
	t.ReplicaLag = roundMilli(kernel.Between(rng, 500*time.Millisecond, 2*time.Second))
	t.ReplicaFetchWait = roundMilli(kernel.Between(rng, 200*time.Millisecond, 500*time.Millisecond))
	t.GroupSession = roundMilli(kernel.Between(rng, 800*time.Millisecond, 2500*time.Millisecond))
	t.GroupRebalance = t.GroupSession * time.Duration(2+rng.IntN(2))
	t.GroupInitialDelay = roundMilli(kernel.Between(rng, 0, 200*time.Millisecond))
	t.Request = roundMilli(kernel.Between(rng, 500*time.Millisecond, 2*time.Second))
	t.Delivery = t.Request * time.Duration(2+rng.IntN(3))
	t.ProduceWait = roundMilli(kernel.Between(rng, t.Request/4, t.Request*3/4))
	t.FetchWait = roundMilli(kernel.Between(rng, 100*time.Millisecond, 500*time.Millisecond))
	t.Think = roundMilli(kernel.Between(rng, drawThinkMin, drawThinkMax))
	t.Restart = roundMilli(kernel.Between(rng, 0, 500*time.Millisecond))
	return t
}

func drawDisk(rng random) Disk {
	var d Disk
	d.SyncLatencyMax = roundMicro(kernel.Between(rng, 200*time.Microsecond, 4*time.Millisecond))
	d.SyncLatencyMin = roundMicro(kernel.Between(rng, 0, d.SyncLatencyMax))
	if rng.Float64() < drawTornWriteChance {
		d.TornWrite = roundChance(rng.Float64())
	}
	if rng.IntN(2) == 0 {
		d.ReadCorruption = roundChance(rng.Float64() * drawReadCorruptionMax)
	}
	if rng.IntN(4) == 0 {
		d.SyncFailure = roundChance(rng.Float64() * drawSyncFailureMax)
	}
	return d
}

func roundMilli(d time.Duration) time.Duration { return d.Round(time.Millisecond) }
func roundMicro(d time.Duration) time.Duration { return d.Round(time.Microsecond) }

// roundChance keeps four decimals, so drawn numbers read well.
func roundChance(p float64) float64 { return math.Round(p*10000) / 10000 }

// mustValid panics when a drawn scenario is invalid: a bug in Draw.
func mustValid(s Scenario) Scenario {
	if err := s.Validate(); err != nil {
		panic(fmt.Sprintf("scenario: seed %d drew an invalid scenario: %v", s.Seed, err))
	}
	return s
}

// drawBalancer draws how a group rebalances.
func drawBalancer(rng random) Balancer {
	switch x := rng.Float64(); {
	case x < drawCooperativeChance:
		return BalancerCooperative
	case x < drawCooperativeChance+drawUpgradeChance:
		return BalancerUpgrade
	}
	return BalancerEager
}
