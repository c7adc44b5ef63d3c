package controller

// Limits of the controller. Each admin request becomes one proposal to the
// quorum, which bounds a proposal's size; these keep every request inside
// that bound and say so with a Kafka error rather than a failed commit.
const (
	// operationsQueuedMax bounds the operations waiting their turn;
	// beyond it a request is answered REQUEST_TIMED_OUT at once.
	operationsQueuedMax = 10_000

	// recordsPerOperationMax bounds the metadata records one operation
	// proposes. It must not exceed what the quorum takes in one proposal
	// (quorum.recordsPerProposalMax, also 10,000).
	recordsPerOperationMax = 10_000

	// partitionsPerTopicMax bounds a topic's partitions, created at once
	// or grown to by CreatePartitions: INVALID_PARTITIONS beyond it.
	partitionsPerTopicMax = 5_000

	// partitionsPerRequestMax bounds the partitions one CreateTopics or
	// CreatePartitions request creates in all; beyond it every topic of
	// the request fails with INVALID_PARTITIONS. Kafka has the same check
	// (10,000, answered POLICY_VIOLATION).
	partitionsPerRequestMax = 5_000

	// producerIDBlockSize is how many producer ids one
	// AllocateProducerIds hands a broker, as in Kafka.
	producerIDBlockSize = 1_000
)

func init() {
	// A request at both partition bounds must still fit one proposal,
	// with room left for its topic and config records.
	assert(partitionsPerTopicMax <= partitionsPerRequestMax && partitionsPerRequestMax < recordsPerOperationMax,
		"partition bounds (%d per topic, %d per request) do not fit %d records per operation",
		partitionsPerTopicMax, partitionsPerRequestMax, recordsPerOperationMax)
}
