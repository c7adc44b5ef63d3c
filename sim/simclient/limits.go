package simclient

import "time"

// The client's bounds and defaults, in one place. Defaults name the Kafka
// client setting they stand for; the simulator runs far shorter timeouts than
// Kafka's, since a simulated run lasts seconds.
const (
	// pendingRequestsMax bounds the requests one connection holds, sent or
	// waiting to be sent. Kafka's max.in.flight.requests.per.connection is
	// 5 for a producer; this client keeps one batch per partition in
	// flight, so the bound is only reached by a bug.
	pendingRequestsMax = 64

	// requestTimeoutDefault is request.timeout.ms (Kafka: 30 s). A request
	// unanswered this long closes its connection, since answers come in
	// order and a missing one blocks all behind it.
	requestTimeoutDefault = 5 * time.Second

	// reconnectBackoffMinDefault and reconnectBackoffMaxDefault are
	// reconnect.backoff.ms and reconnect.backoff.max.ms (Kafka: 50 ms and
	// 1 s): a connection that closed is redialed after a backoff that
	// doubles at each failure and resets once a connection works.
	reconnectBackoffMinDefault = 50 * time.Millisecond
	reconnectBackoffMaxDefault = time.Second

	// metadataRefreshBackoffDefault is retry.backoff.ms for metadata
	// (Kafka: 100 ms): refreshes are at least this far apart.
	metadataRefreshBackoffDefault = 100 * time.Millisecond

	// metadataWaitersMax bounds the callers waiting for one refresh.
	metadataWaitersMax = 4096

	// deliveryTimeoutDefault is delivery.timeout.ms (Kafka: 120 s): how
	// long a send may retry before it gives up.
	deliveryTimeoutDefault = 5 * time.Second

	// produceTimeoutDefault is the Produce request's TimeoutMillis, how
	// long the broker waits for acks=all (Kafka sends request.timeout.ms).
	produceTimeoutDefault = 2 * time.Second

	// retryBackoffDefault and retryBackoffMaxDefault are retry.backoff.ms
	// and retry.backoff.max.ms (Kafka: 100 ms and 1 s).
	retryBackoffDefault    = 50 * time.Millisecond
	retryBackoffMaxDefault = time.Second

	// lanesMax bounds the partitions one producer sends to.
	lanesMax = 1024

	// batchRecordsMax bounds the records of one send (one batch).
	batchRecordsMax = 1024

	// inFlightMaxIdempotent bounds an idempotent producer's batches in
	// flight per partition: Kafka's max.in.flight.requests.per.connection
	// may be at most 5 with idempotence, the broker's window of batches
	// it deduplicates against.
	inFlightMaxIdempotent = 5

	// fetchMaxWaitDefault is fetch.max.wait.ms (Kafka: 500 ms).
	fetchMaxWaitDefault = 200 * time.Millisecond
	// fetchMaxBytesDefault is fetch.max.bytes (Kafka: 55 MiB);
	// partitionMaxBytesDefault is max.partition.fetch.bytes (Kafka: 1 MiB).
	fetchMaxBytesDefault     = 1 << 20
	partitionMaxBytesDefault = 256 << 10

	// assignedPartitionsMax bounds the partitions one reader reads.
	assignedPartitionsMax = 1024

	// sessionTimeoutDefault is session.timeout.ms (Kafka: 45 s): a group
	// member that sends no heartbeat this long is removed by the
	// coordinator.
	sessionTimeoutDefault = 3 * time.Second
	// rebalanceTimeoutDefault is max.poll.interval.ms (Kafka: 5 min),
	// which Kafka's consumer sends as its JoinGroup rebalance timeout:
	// how long a rebalance waits for the member to rejoin.
	rebalanceTimeoutDefault = 5 * time.Second
	// metadataMaxAgeDefault is metadata.max.age.ms (Kafka: 5 min), the
	// group leader's watch for new partitions.
	metadataMaxAgeDefault = 5 * time.Minute
	// heartbeatsPerSession is how many heartbeats fit in a session
	// timeout when heartbeat.interval.ms is left zero (Kafka: 3 s of
	// 45 s, and its guidance is no more than a third).
	heartbeatsPerSession = 3
	// groupRequestTimeoutMargin is what Kafka's consumer adds to the
	// rebalance timeout to wait for JoinGroup and SyncGroup answers, which
	// the coordinator holds until the rebalance completes
	// (AbstractCoordinator's JOIN_GROUP_TIMEOUT_LAPSE, 5 s).
	groupRequestTimeoutMargin = 5 * time.Second
	// fetchAnswerMargin is how much longer than its max wait a Fetch
	// may take to be answered (Client.RequestFetch): the round trip
	// and the broker's work, with room to spare.
	fetchAnswerMargin = 200 * time.Millisecond
	// assignorsMax bounds the assignors a consumer offers.
	assignorsMax = 8
	// groupMembersMax bounds the members a leader assigns partitions to:
	// the coordinator's own bound (core/group membersPerGroupMax). A
	// JoinGroup answer listing more is a broken broker.
	groupMembersMax = 10_000
	// leaderMetadataAttemptsMax bounds the metadata refreshes a group
	// leader makes to learn its topic's partitions; past it the leader
	// rejoins, and the coordinator's sync deadline sorts the group out.
	leaderMetadataAttemptsMax = 8

	// clientIDDefault is client.id when the config leaves it empty.
	clientIDDefault = "sluice-simclient"
)

// wallClockEpoch is the date a client's wall clock reads at virtual time
// zero: the same date the simulator's machines start at, so record
// timestamps sit next to the broker's clock, as they would on hosts kept in
// step by NTP.
var wallClockEpoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
