package broker

// Planted bugs (core.Canaries) that the simulator must catch. Production
// never switches them on.
const (
	// CanaryProduceAnsweredEarly answers a Produce as soon as the
	// partitions handled so far are acknowledged, as Sluice did before
	// the fault harness caught it: an acknowledgement that comes at once
	// (a retry of a committed batch) sends the answer while the later
	// partitions are unhandled, which go out with no error and no
	// offset, their writes taken for acknowledged.
	CanaryProduceAnsweredEarly = "broker-produce-answered-early"
	// CanaryReadsPastLease lets a broker serve consumers' reads and
	// committed offsets whatever its lease says, once it has held one,
	// as Kafka's brokers do: a leader or group coordinator cut off from
	// the controller answers from a state its successor has moved past
	// (records since deleted, log ends since gone, offsets since
	// committed over).
	CanaryReadsPastLease = "broker-reads-past-lease"
	// CanaryLeaseOutlastsFencing has a broker trust its last unfenced
	// heartbeat for three quarters of a session, as Sluice did until the
	// simulator's clock drift showed it (scenarios/regressions/
	// cluster-nonlinearizable-committed-offset-clock-drift-4.txt): sound
	// only while the broker's clock runs at more than three quarters of
	// the controller's. A slow-clocked coordinator, stranded, still
	// answers offset fetches after the controller, on a fast clock, has
	// fenced it and its successor has taken newer commits.
	CanaryLeaseOutlastsFencing = "broker-lease-outlasts-fencing"
	// CanaryClosesInMapOrder has a stopping broker close its client
	// connections in map order, as Sluice did until the simulator's first
	// controlled shutdowns (db2051f), under a comment that called the
	// order harmless: each close sends a FIN, so two runs of one seed
	// part where a broker with two connections or more stops. Every
	// check of a single run passes; only running the seed twice
	// (sluice sim --determinism) catches it.
	CanaryClosesInMapOrder = "broker-closes-in-map-order"
)
