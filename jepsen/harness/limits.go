package harness

import "time"

// Bounds of the cluster and its proxies.
const (
	// clusterNodesMax bounds a cluster's size, as `sluice cluster` does.
	clusterNodesMax = 9
	// clusterStartTimeout bounds a cluster's first start: every node
	// elects, registers and lists every broker.
	clusterStartTimeout = 60 * time.Second
	// nodeStopTimeout is how long a SIGTERM may take (a controlled
	// shutdown moves leaderships first, for up to 5 s) before SIGKILL.
	nodeStopTimeout = 20 * time.Second
	// exitLogTailBytesMax bounds the log kept for a node that died on
	// its own.
	exitLogTailBytesMax = 16 << 10
	// startFailureLogTailBytesMax bounds each node's log quoted when a
	// cluster fails to start and no node exited.
	startFailureLogTailBytesMax = 4 << 10

	// proxyConnectionsMax bounds the connections one proxy carries at
	// once; beyond it new ones are refused (closed).
	proxyConnectionsMax = 4096
	// proxyDialTimeout bounds a proxy's connect to the node behind it.
	proxyDialTimeout = 2 * time.Second
	// chunkBytesMax is the largest read a pump forwards as one chunk.
	chunkBytesMax = 32 << 10
	// chunkQueueMax bounds the chunks a pump holds while its link stalls
	// or delays: 64 × 32 KiB = 2 MiB per direction, beyond which the
	// sender's own buffers fill and it blocks, as on a real network.
	chunkQueueMax = 64
	// acceptRetryDelay spaces accept retries after a transient failure.
	acceptRetryDelay = 10 * time.Millisecond
)

// Bounds of the observer: the harness's own requests to nodes, which go
// around the proxies.
const (
	// observerRequestTimeout bounds one request to one node.
	observerRequestTimeout = 3 * time.Second
	// observerResponseBytesMax bounds an answer the observer accepts.
	observerResponseBytesMax = 64 << 20
	// observerPollInterval{Min,Max} space the polls of a wait: quick at
	// first, backing off so a slow recovery is not flooded.
	observerPollIntervalMin = 20 * time.Millisecond
	observerPollIntervalMax = 500 * time.Millisecond
	// observerClientID names the observer in the nodes' logs.
	observerClientID = "sluice-jepsen-observer"
	// consumerOffsetsTopic is the internal topic of committed offsets,
	// which must be healthy too before groups can be judged.
	consumerOffsetsTopic = "__consumer_offsets"
)

// adminRetryDelay spaces retries of an admin request the cluster cannot
// serve yet.
const adminRetryDelay = 200 * time.Millisecond

// adminRequestTimeout bounds one round of the deleter (deleter.go): the
// committed offset, then DeleteRecords.
const adminRequestTimeout = 10 * time.Second

// Client settings of the workload. Faults last seconds, so clients must
// notice a moved leader within one (metadata) and give up on a record
// after a few fault windows at most (delivery timeout).
const (
	clientMetadataAgeMin         = 250 * time.Millisecond
	clientMetadataAgeMax         = 5 * time.Second
	clientDialTimeout            = 3 * time.Second
	clientRequestTimeoutOverhead = 5 * time.Second
	clientRetryBackoff           = 100 * time.Millisecond

	// produceDeliveryTimeout is kgo's record delivery timeout: past it a
	// record's outcome is unknown (info).
	produceDeliveryTimeout = 20 * time.Second
	// produceRequestTimeout is how long a broker may hold an acks=all
	// produce waiting for the ISR.
	produceRequestTimeout = 5 * time.Second

	// consumerPollTimeout bounds one PollFetches.
	consumerPollTimeout = time.Second
	// consumerFetchWaitMax is the consumers' fetch.max.wait.ms.
	consumerFetchWaitMax = 500 * time.Millisecond

	// Group members: session, heartbeat and rebalance timeouts (the
	// broker's group.min.session.timeout.ms is 6 s).
	groupSessionTimeout    = 6 * time.Second
	groupHeartbeatInterval = time.Second
	groupRebalanceTimeout  = 10 * time.Second
	// groupCommitTimeout bounds one synchronous commit.
	groupCommitTimeout = 10 * time.Second

	// committedReadInterval spaces the reads of committed offsets;
	// committedReadTimeout bounds one.
	committedReadInterval = time.Second
	committedReadTimeout  = 5 * time.Second
)

// rollingRejoinTimeout bounds how long a rolling restart waits for a
// restarted node to be back in every ISR before it moves on (and reports
// the node as not rejoined).
const rollingRejoinTimeout = 60 * time.Second

// Bounds of a workload.
const (
	workloadPartitionsMax     = 64
	workloadClientsMax        = 64
	workloadSendsPerSecondMax = 20_000
	workloadBatchRecordsMax   = 64
)

// Phases of a run.
const (
	// faultPhaseMax bounds a run's fault phase.
	faultPhaseMax = 2 * time.Hour
	// setupTimeout bounds creating the topic and seeing its ISRs full.
	setupTimeout = 60 * time.Second
	// warmupDuration lets the clients settle before the first fault.
	warmupDuration = 3 * time.Second
	// recoveryTimeout bounds the wait, once every fault is healed, for
	// every partition to be led with a full ISR.
	recoveryTimeout = 90 * time.Second
	// settleDuration keeps the workload running after recovery, long
	// enough for writes to be acknowledged again (liveness).
	settleDuration = 5 * time.Second
	// drainTimeout bounds the final read of every partition.
	drainTimeout = 90 * time.Second
	// drainStartsRefresh spaces the final read's listings of log starts
	// while its polls bring nothing (see finalDrain).
	drainStartsRefresh = time.Second
	// searchSteps is each linearizability search's budget (per partition
	// log and per group's committed offset): the checker's default, four
	// times over, as a run against real processes is costlier to repeat
	// than a simulated seed.
	searchSteps = 1 << 26
	// progressInterval spaces the progress lines.
	progressInterval = 10 * time.Second
	// nemesisStream is the PCG stream of the nemesis's choices.
	nemesisStream = 0x6e656d65736973
)

// The strand fault.
const (
	// strandNodesMin: with fewer nodes one of its two splits leaves no
	// quorum, and nothing is fenced.
	strandNodesMin = 5
	// strandStepTimeout bounds each wait for the controller to act on a
	// split (fence, shrink the ISR, move the leadership).
	strandStepTimeout = 20 * time.Second
)

// The operator reassigning partitions (reassigner.go).
const (
	// reassignCancelShare is the share of its rounds that cancel.
	reassignCancelShare = 0.2
	// reassignSettleTimeout bounds the wait, once the cluster has
	// healed and the operator stopped, for no reassignment to be left
	// in progress and every node to describe the final replicas.
	reassignSettleTimeout = 60 * time.Second
	// reassignStrayTimeout bounds the wait, after that, for every node
	// outside a partition's replicas to have deleted its copy.
	reassignStrayTimeout = 30 * time.Second
	// reassignStream is the PCG stream of its draws.
	reassignStream = 0x7265617373696e
)

// recreateEveryMin bounds how often the operator deletes and creates its
// topic again (Workload.RecreateEvery): each round is several admin
// requests.
const recreateEveryMin = 200 * time.Millisecond
