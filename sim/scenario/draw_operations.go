package scenario

import (
	"time"

	"sluice/core/batch"
	"sluice/sim/kernel"
)

// What the swarm draws beside the cluster and the faults (draw.go): an
// operator's actions during the run (partitions added, records deleted,
// topics re-created, configs altered, leaders elected, partitions
// reassigned) and the producers' batching, each from a stream of the seed
// of its own, so that adding one moved nothing else a seed draws.

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
