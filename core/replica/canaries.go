package replica

// Planted bugs (core.Canaries) that the simulator's broker workload must
// catch. Production never switches them on.
const (
	// CanaryAcksBeforeSync makes the high watermark count every append,
	// synced or not, under the durable default: acks=all is answered and
	// reads are exposed before the fsync, so a crash loses what was
	// acknowledged and read.
	CanaryAcksBeforeSync = "replica-acks-before-sync"

	// CanaryDuplicateWindowIgnored treats a batch the idempotent
	// producer state recognizes as a retry (a Duplicate verdict) as a
	// new one: it is appended again, so a retried send is in the log
	// twice.
	CanaryDuplicateWindowIgnored = "producer-duplicate-window-ignored"

	// CanaryDuplicateWindowOfOne deduplicates a retry against the
	// producer's last batch alone, as Kafka's broker did before it kept
	// five (KAFKA-5494): a producer with several batches in flight that
	// retries them after the later ones were appended gets the earlier
	// ones appended again. Only such a producer can show it.
	CanaryDuplicateWindowOfOne = "producer-duplicate-window-of-one"

	// CanaryHighWatermarkWithoutISR makes a leader's high watermark
	// ignore its followers: it follows the leader's own log alone, so
	// acks=all is answered, and consumers read, what no other replica
	// has; a failover loses it.
	CanaryHighWatermarkWithoutISR = "replica-hw-without-isr"

	// CanaryTruncateToHighWatermark is the bug KIP-101 fixed: a follower
	// of a new leader truncates its log to its own high watermark, which
	// may lag the leader's, and fetches without its last epoch, so the
	// leader cannot find where the logs diverge. Committed records can be
	// cut, and a divergent tail survives as "replicated".
	CanaryTruncateToHighWatermark = "replica-truncate-to-hw"

	// CanaryReadAboveHighWatermark serves consumers up to the log end
	// instead of the high watermark: they read records a failover may
	// take away.
	CanaryReadAboveHighWatermark = "replica-read-above-hw"

	// CanaryAcksBeforeFollowerSync makes followers fetch again, reporting
	// their log end, before their appends are synced (and keep a high
	// watermark above their synced offset) under the durable default:
	// the leader counts records as held by replicas whose machines may
	// lose them, so a crash of every replica loses acknowledged writes.
	CanaryAcksBeforeFollowerSync = "replica-acks-before-follower-sync"

	// CanaryDeleteWithoutFollowers answers a DeleteRecords once the
	// leader's own new log start is durable, without waiting for its
	// followers to follow it (the bug cluster seed 59 found): a follower
	// that takes over serves the deleted records again.
	CanaryDeleteWithoutFollowers = "replica-delete-without-followers"

	// CanaryTakeoverIgnoresFormerLeaders lets a new leader move its high
	// watermark at once, as Kafka's does, while a leader deposed without
	// being fenced may still serve on its lease (takeover.go): a client
	// reads what the new leader exposed, then the old leader's older
	// state (the bug cluster seed 5171018 found).
	CanaryTakeoverIgnoresFormerLeaders = "replica-takeover-ignores-former-leaders"

	// CanaryIgnoreTopicID opens whatever directory has the partition's
	// topic name and index, whatever topic id its partition.metadata
	// names, as Sluice did before it kept the file (the bug cluster seed
	// 618 found): a node down across a deletion and re-creation takes the
	// deleted topic's records for the new topic's.
	CanaryIgnoreTopicID = "replica-ignore-topic-id"
	// CanaryFollowerForgetsProducers makes a follower append replicated
	// batches without recording their producers' sequences, so a
	// follower that becomes leader knows only the producers its own
	// appends taught it: an idempotent producer's retry of a batch the
	// old leader wrote, and whose answer was lost, is appended again.
	// Kafka keeps sequence numbers in the log, and followers rebuild the
	// producer state from what they replicate, for exactly this failover.
	CanaryFollowerForgetsProducers = "replica-follower-forgets-producers"
	// CanaryRetentionAboveHighWatermark lets retention delete segments
	// up to the log end instead of the high watermark: a leader deletes
	// records its followers have not fetched, which then exist nowhere,
	// and the high watermark passes them once the followers skip to the
	// new log start.
	CanaryRetentionAboveHighWatermark = "replica-retention-above-hw"
)
