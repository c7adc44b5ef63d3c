package scenario

import (
	"time"

	corelog "sluice/core/log"
)

// Bounds on what a scenario may ask for. A simulated run holds everything
// in memory and runs on one goroutine, so each is a size a run can afford;
// Validate refuses anything beyond, with the bound named.
const (
	nodesMin             = 1
	nodesMax             = 7
	offsetsPartitionsMax = 8
	// A metadata snapshot every few records is legal, if slow; every
	// record would have each commit write a snapshot file.
	metadataSnapshotEveryMin = 2
	metadataSnapshotEveryMax = 1_000_000
	// segment.bytes as core/log allows it: a segment holds at least a
	// small batch, and a file offset fits 32 bits.
	segmentBytesMin = corelog.SegmentBytesMin
	segmentBytesMax = corelog.SegmentBytesMax
	// A retention check more often than this would be most of a run's
	// events.
	retentionCheckMin = 10 * time.Millisecond
	retentionCheckMax = time.Hour
	// retention.bytes keeps at least a segment's worth; above a
	// gigabyte a run of seconds would never delete anything.
	retentionBytesMin = segmentBytesMin
	retentionBytesMax = 1 << 30
	topicsMax         = 4
	partitionsMax     = 16
	// deleteEveryMin bounds how often an operator deletes records
	// (Topic.DeleteEvery), so a run sends a bounded number of requests.
	deleteEveryMin = 100 * time.Millisecond
	// recreateEveryMin bounds how often an operator deletes a topic and
	// creates it again (Topic.RecreateEvery).
	recreateEveryMin = 200 * time.Millisecond
	// leaderRebalanceEveryMin and Max bound a leader rebalancing interval
	// (Cluster.LeaderRebalanceEvery): whole seconds, as Kafka's setting.
	leaderRebalanceEveryMin = time.Second
	leaderRebalanceEveryMax = time.Minute
	// alterEveryMin bounds how often an operator alters a topic's
	// configs (Topic.AlterEvery).
	alterEveryMin = 100 * time.Millisecond
	// electEveryMin bounds how often an operator runs leader elections
	// (Topic.ElectEvery).
	electEveryMin = 100 * time.Millisecond
	// lingerMax bounds a producer's linger (Producer.Linger).
	lingerMax = time.Second
	// batchMax bounds the records of a producer's send
	// (Producer.BatchMax).
	batchMax = 64
	// inFlightMax bounds a producer's sends in flight per partition
	// (Producer.InFlight): Kafka allows five with idempotence.
	inFlightMax = 5
	// reassignEveryMin bounds how often an operator reassigns a
	// partition (Topic.ReassignEvery).
	reassignEveryMin      = 100 * time.Millisecond
	producersMax          = 8
	readersMax            = 4
	groupsMax             = 2
	groupMembersMax       = 5
	groupOffsetReadersMax = 2
	// clientsMax bounds every client machine together.
	clientsMax = 16
	// nameBytesMax bounds topic, client and group names.
	nameBytesMax   = 32
	canariesMax    = 8
	eventsMax      = 500
	ratesMax       = 32
	timeoutMin     = time.Millisecond
	timeoutMax     = time.Minute
	latencyMax     = time.Second
	syncLatencyMax = 5 * time.Second
	// slowNetLatencyMax bounds a slow network's one-way latency: a slow
	// link, not a cut (a cut holds frames for as long as it lasts).
	slowNetLatencyMax = 5 * time.Second
	safetyMin         = time.Second
	safetyMax         = 5 * time.Minute
	livenessMin       = time.Second
	livenessMax       = 10 * time.Minute
	// operationsMax bounds the operations floor: a run's history holds
	// at most history.OpsMax entries, two per operation.
	operationsMax = 100_000
	// OperationsWaitMax bounds how long the safety phase runs on past
	// Safety waiting for the operations floor, so that a run whose
	// clients cannot make progress still ends.
	OperationsWaitMax = 30 * time.Second
	// windowMax bounds how long one fault lasts.
	windowMax = 5 * time.Minute
	// clockJumpMax bounds a clock jump either way.
	clockJumpMax = 24 * time.Hour
	// clockRateMin and clockRateMax bound a clock's rate.
	clockRateMin = 0.01
	clockRateMax = 10.0
	// rateMeanMin bounds how often a fault kind may fire on average.
	rateMeanMin = 10 * time.Millisecond
)
