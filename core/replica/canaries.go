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
)
