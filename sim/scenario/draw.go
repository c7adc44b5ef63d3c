package scenario

import (
	"fmt"
	"math"
	"time"

	"sluice/core/batch"
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

// DriftRateMin and DriftRateMax bound the rate a clock-drift fault runs a
// node's clock at. The timing arguments in core/ (a broker's read lease, the
// controller's leadership lease) must hold for any two clocks in between.
const (
	DriftRateMin = 0.8
	DriftRateMax = 1.25
)

// kindDraw is how the swarm draws one kind's rate: on with probability
// chance, then a mean interval in [low, high].
type kindDraw struct {
	kind      Kind
	chance    float64
	low, high time.Duration
}

var kindDraws = []kindDraw{
	{KindCrash, 0.6, 2 * time.Second, 6 * time.Second},
	{KindPowerLoss, 0.2, 4 * time.Second, 10 * time.Second},
	{KindPause, 0.35, 2 * time.Second, 6 * time.Second},
	{KindIsolate, 0.35, 2 * time.Second, 6 * time.Second},
	{KindCutFrom, 0.2, 3 * time.Second, 8 * time.Second},
	{KindCutTo, 0.2, 3 * time.Second, 8 * time.Second},
	{KindBridge, 0.2, 3 * time.Second, 8 * time.Second},
	{KindMinority, 0.25, 3 * time.Second, 8 * time.Second},
	{KindReset, 0.35, time.Second, 4 * time.Second},
	{KindClockJump, 0.25, 2 * time.Second, 6 * time.Second},
	{KindClockDrift, 0.2, 3 * time.Second, 8 * time.Second},
	{KindSlowDisk, 0.3, 2 * time.Second, 6 * time.Second},
	{KindFullDisk, 0.2, 3 * time.Second, 8 * time.Second},
	{KindFailFsync, 0.15, 4 * time.Second, 10 * time.Second},
	{KindClientCrash, 0.35, 2 * time.Second, 6 * time.Second},
	{KindClientPause, 0.3, 3 * time.Second, 8 * time.Second},
	// Added after the others (see kinds), and rare: a strand long enough
	// to matter outlasts the broker session, and the other network kinds
	// already exercise most of what it does.
	{KindStrand, 0.1, 4 * time.Second, 10 * time.Second},
	// Added last, after the strand, for the same reason. A partition
	// splits the nodes its own way (drawSides), so it reaches the shapes
	// the kinds aimed at one node cannot. A heal is rarer, and drawn only
	// when some network fault is on: it ends them all before their
	// windows do, as an operator's fix or a link coming back would.
	{KindPartition, 0.25, 3 * time.Second, 8 * time.Second},
	{KindHeal, 0.15, 4 * time.Second, 10 * time.Second},
}

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

// drawGrowth has an operator add partitions to one of the topics in some
// runs, while the clients and the faults go on: CreatePartitions through
// a controller that may fail over, new replicas on brokers that may be
// down, producers starting on partitions their metadata may not show
// yet, and a group whose leader must notice and rebalance.
func drawGrowth(rng random, topics []Topic, safety time.Duration) {
	if rng.Float64() >= drawGrowChance {
		return
	}
	t := &topics[rng.IntN(len(topics))]
	t.GrowTo = min(partitionsMax, t.Partitions+drawGrowMin+rng.IntN(drawGrowMax-drawGrowMin+1))
	from := drawGrowFromMin + rng.Float64()*(drawGrowFromMax-drawGrowFromMin)
	t.GrowAt = roundMilli(time.Duration(from * float64(safety)))
	if t.GrowTo <= t.Partitions {
		t.GrowTo, t.GrowAt = 0, 0
	}
}

// drawDeletes has an operator delete consumed records (DeleteRecords) in
// some runs, from the topic the first group reads: the log start moves
// under readers, followers and leaders while the faults go on, and what
// was deleted must stay deleted through crashes and leader changes.
func drawDeletes(rng random, s *Scenario) {
	if rng.Float64() >= drawDeleteChance || len(s.Clients.Groups) == 0 {
		return
	}
	for i := range s.Topics {
		if s.Topics[i].Name == s.Clients.Groups[0].Topic {
			s.Topics[i].DeleteEvery = roundMilli(kernel.Between(rng, drawDeleteEveryMin, drawDeleteEveryMax))
		}
	}
}

// drawRecreates has an operator delete a topic and create it again under
// the same name in some runs, over and over while the faults go on: the
// deletion must reach every replica's disk before the name's next topic
// takes the same directories, through crashes and power losses, and a
// node that missed it must not serve the old records as the new topic's.
// The topic is the operator's own (named recreatedTopicName), so no
// client's history loses what a deletion takes.
func drawRecreates(rng random, s *Scenario) {
	if rng.Float64() >= drawRecreateChance {
		return
	}
	t := Topic{Name: RecreatedTopicName, Partitions: 1 + rng.IntN(drawRecreatePartitionsMax)}
	t.Replication = 2 + rng.IntN(min(3, s.Cluster.Nodes)-1)
	t.MinInsync = 1 + rng.IntN(t.Replication)
	t.RecreateEvery = roundMilli(kernel.Between(rng, drawRecreateEveryMin, drawRecreateEveryMax))
	s.Topics = append(s.Topics, t)
}

// drawAlters has an operator alter the configs of one topic the clients
// use in some runs, over and over while the faults go on: turning unclean
// leader election on and off and moving min.insync.replicas, as operators
// do to bring a partition back whose in-sync replicas are down. The
// brokers must follow each change, and the replicas agree again once an
// unclean election it allowed is over.
func drawAlters(rng random, s *Scenario) {
	if t, every := drawClientTopicEvery(rng, s, drawAlterChance, drawAlterEveryMin, drawAlterEveryMax); t != nil {
		t.AlterEvery = every
	}
}

// drawElections has an operator run leader elections for one topic the
// clients use in some runs (ElectLeaders, preferred or unclean), over and
// over while the faults go on: leadership moved on purpose must keep every
// promise leadership moved by a failure does.
func drawElections(rng random, s *Scenario) {
	if t, every := drawClientTopicEvery(rng, s, drawElectChance, drawElectEveryMin, drawElectEveryMax); t != nil {
		t.ElectEvery = every
	}
}

// drawReassignments has an operator move partitions of one topic the
// clients use to other nodes in some runs (AlterPartitionReassignments),
// over and over while the faults go on: data on its way from the replicas
// that go to those that come must lose nothing.
func drawReassignments(rng random, s *Scenario) {
	if t, every := drawClientTopicEvery(rng, s, drawReassignChance, drawReassignEveryMin, drawReassignEveryMax); t != nil {
		t.ReassignEvery = every
	}
}

// drawLinger has some producers linger, as real clients do (linger.ms),
// so that their sends to one broker go out in one Produce of several
// partitions: a broker must answer such a request only once it has
// handled every partition in it.
func drawLinger(rng random, s *Scenario) {
	for i := range s.Clients.Producers {
		if rng.Float64() < drawLingerChance {
			s.Clients.Producers[i].Linger = roundMilli(kernel.Between(rng, drawLingerMin, drawLingerMax))
		}
	}
}

// drawBatching has some producers send several records per batch and
// some compress them, as real clients do (batch.size, compression.type):
// a batch is appended, replicated, deleted below, served and decompressed
// whole, so offsets inside one, and a consumer's position in its middle,
// are exercised only so. Its own stream: runs where no producer draws
// either send as they did before.
func drawBatching(rng random, s *Scenario) {
	for i := range s.Clients.Producers {
		p := &s.Clients.Producers[i]
		if rng.Float64() < drawBatchChance {
			p.BatchMax = 2 + rng.IntN(drawBatchMax-1)
		}
		if rng.Float64() < drawCompressChance {
			p.Compression = batch.CompressionGzip + rng.IntN(batch.CompressionZstd)
		}
	}
}

// drawInFlight has some idempotent producers keep several sends in
// flight per partition, as Kafka's producers do by default (five): a
// retry after a fault then repeats batches behind which later ones were
// appended, which the broker must answer from its window of the last
// five, not append again. Its own stream: runs where no producer draws it
// send as they did before.
func drawInFlight(rng random, s *Scenario) {
	for i := range s.Clients.Producers {
		p := &s.Clients.Producers[i]
		if p.Idempotent && rng.Float64() < drawInFlightChance {
			p.InFlight = 2 + rng.IntN(inFlightMax-1)
		}
	}
}

// drawClientTopicEvery picks, in chance of the runs, one topic the
// clients use (not one created again) and an interval from least to most
// for an operator's action on it; nil in the other runs.
func drawClientTopicEvery(rng random, s *Scenario, chance float64, least, most time.Duration) (*Topic, time.Duration) {
	if rng.Float64() >= chance {
		return nil, 0
	}
	var used []int
	for i, t := range s.Topics {
		if !t.Recreated() && s.Clients.Uses(t.Name) {
			used = append(used, i)
		}
	}
	if len(used) == 0 {
		return nil, 0
	}
	t := &s.Topics[used[rng.IntN(len(used))]]
	return t, roundMilli(kernel.Between(rng, least, most))
}

// RecreatedTopicName names the topic the swarm's operator deletes and
// creates again.
const RecreatedTopicName = "scratch"

// hasNetworkRate reports whether a network kind is on among rates.
func hasNetworkRate(rates []Rate) bool {
	for _, r := range rates {
		if r.Kind.IsNetwork() {
			return true
		}
	}
	return false
}

// expectedSends is how many sends the producers' lanes are expected to
// make in the safety phase: a lane pauses Think/2 on average between sends.
func expectedSends(s Scenario) int {
	return 2 * s.Lanes() * int(s.Safety) / int(s.Timeouts.Think)
}

// thinkForSends is the longest Think at which expectedSends is at least
// sends.
func thinkForSends(s Scenario, sends int) time.Duration {
	return time.Duration(2 * s.Lanes() * int(s.Safety) / sends).Truncate(time.Millisecond)
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

// GenerateSchedule draws the fault schedule of a scenario from its rates:
// each kind a Poisson process over the safety phase, targets and windows
// drawn from its own stream of the seed, so that the rest of the scenario
// can change without moving the faults. A scenario whose rates give fewer
// than three faults gets more, of the kinds it has on (or crashes), at
// uniform times; a scenario with no rates at all gets none.
func GenerateSchedule(s Scenario) []Event {
	if len(s.Rates) == 0 {
		return nil
	}
	rng := kernel.NewRand(s.Seed, "scenario/schedule")
	var events []Event
	for _, r := range s.Rates {
		at := time.Duration(0)
		for len(events) < eventsMax {
			at += kernel.Exponential(rng, r.Mean)
			if at >= s.Safety {
				break
			}
			events = append(events, drawEvent(rng, s, r.Kind, roundMilli(at)))
		}
	}
	// A heal is no fault of its own: the floor counts the others, and
	// is made up from them (a scenario whose only rate is a heal gets
	// crashes).
	faultKinds := make([]Kind, 0, len(s.Rates))
	for _, r := range s.Rates {
		if r.Kind != KindHeal {
			faultKinds = append(faultKinds, r.Kind)
		}
	}
	if len(faultKinds) == 0 {
		faultKinds = []Kind{KindCrash}
	}
	for faults(events) < drawFaultsMin {
		kind := faultKinds[rng.IntN(len(faultKinds))]
		events = append(events, drawEvent(rng, s, kind, roundMilli(kernel.Between(rng, 0, s.Safety-time.Millisecond))))
	}
	sortEvents(events)
	return events
}

// faults counts the events that are faults of their own: all but heals.
func faults(events []Event) int {
	n := 0
	for _, e := range events {
		if e.Kind != KindHeal {
			n++
		}
	}
	return n
}

// drawEvent draws one event of a kind at a time.
func drawEvent(rng random, s Scenario, kind Kind, at time.Duration) Event {
	e := Event{At: min(at, s.Safety-time.Millisecond), Kind: kind}
	info, _ := infoOf(kind)
	if info.window {
		e.For = roundMilli(kernel.Between(rng, s.Faults.WindowMin, s.Faults.WindowMax))
	}
	switch info.target {
	case targetNode:
		e.Target = drawTarget(rng, s, kind)
	case targetSides:
		e.Sides = drawSides(rng, s.Cluster.Nodes)
	case targetClient:
		names := s.ClientNames()
		e.Client = "any"
		if len(names) > 0 {
			e.Client = names[rng.IntN(len(names))]
		}
	}
	switch kind {
	case KindPowerLoss:
		if rng.IntN(2) == 0 {
			e.Stagger = roundMilli(kernel.Between(rng, 0, e.For))
		}
	case KindClockJump:
		e.By = roundMilli(kernel.Between(rng, drawClockJumpMin, drawClockJumpMax))
		if rng.IntN(2) == 0 {
			e.By = -e.By
		}
	case KindClockDrift:
		e.Rate = roundChance(DriftRateMin + rng.Float64()*(DriftRateMax-DriftRateMin))
	case KindSlowDisk:
		e.SyncMin = roundMilli(kernel.Between(rng, drawSlowSyncMinMin, drawSlowSyncMinMax))
		e.SyncMax = roundMilli(kernel.Between(rng, e.SyncMin, drawSlowSyncMaxMax))
	}
	return e
}

// drawTarget picks the node a fault aims at: at the scenario's leader bias
// a partition's leader or the controller, chosen when the event fires;
// otherwise a node by id. A reset aims at one random connection half the
// time.
func drawTarget(rng random, s Scenario, kind Kind) Target {
	if kind == KindReset && rng.IntN(2) == 0 {
		return Target{Role: RoleAny}
	}
	if rng.Float64() < s.Faults.LeaderBias {
		if rng.IntN(4) == 0 {
			return Target{Role: RoleController}
		}
		topic := s.Topics[rng.IntN(len(s.Topics))]
		return LeaderTarget(topic.Name, int32(rng.IntN(topic.Partitions)))
	}
	return NodeTarget(1 + rng.IntN(s.Cluster.Nodes))
}

// drawSides splits the nodes in two sides, each listed ascending: one
// node drawn for each side, then every other node on either side, or half
// the time on neither (a node left out still reaches both sides, as the
// target of a bridge does). Any split can come out, {n1 n4 | n2 n3 n5} as
// well as the shapes of a minority, an isolation or a bridge.
func drawSides(rng random, nodes int) [2][]int {
	if nodes < 2 {
		panic(fmt.Sprintf("scenario: a partition of %d node(s) has no two sides", nodes))
	}
	left := 1 + rng.IntN(nodes)
	right := 1 + rng.IntN(nodes-1)
	if right >= left {
		right++
	}
	places := 2
	if rng.IntN(2) == 0 {
		places = 3 // left, right, or neither
	}
	var sides [2][]int
	for id := 1; id <= nodes; id++ {
		switch {
		case id == left:
			sides[0] = append(sides[0], id)
		case id == right:
			sides[1] = append(sides[1], id)
		default:
			if place := rng.IntN(places); place < 2 {
				sides[place] = append(sides[place], id)
			}
		}
	}
	return sides
}

// sortEvents orders events by time, then by kind, stably.
func sortEvents(events []Event) {
	for i := 1; i < len(events); i++ {
		for j := i; j > 0 && eventBefore(events[j], events[j-1]); j-- {
			events[j], events[j-1] = events[j-1], events[j]
		}
	}
}

func eventBefore(a, b Event) bool {
	if a.At != b.At {
		return a.At < b.At
	}
	return kindOrder(a.Kind) < kindOrder(b.Kind)
}

// subset draws a non-empty subset of n partitions, ascending.
func subset(rng random, n int) []int32 {
	for {
		var chosen []int32
		for p := range int32(n) {
			if rng.IntN(2) == 0 {
				chosen = append(chosen, p)
			}
		}
		if len(chosen) > 0 && len(chosen) < n {
			return chosen
		}
		if n == 1 {
			return nil
		}
	}
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
