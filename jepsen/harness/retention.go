package harness

import (
	"context"
	"slices"
	"strings"

	"github.com/twmb/franz-go/pkg/kadm"

	"sluice/jepsen/checker"
	"sluice/jepsen/history"
)

// Retention: with a retention setting passed to the nodes (--set
// log.retention.bytes=16384 and the like), the brokers delete the oldest
// records of every partition on their own, read or not, so a value never
// polled may be gone on purpose. After the final read the runner lists
// each partition's log start, and the checker permits what is missing
// below it (checker.Options.Deleted), as it does below a DeleteRecords
// answer; everything at or above it is judged as before. Without such a
// setting nothing is permitted: a log start that moved on its own would
// be a bug.

// retentionKeys are the broker settings that make retention delete within
// a run; -1 (unlimited) does not.
var retentionKeys = []string{"log.retention.bytes", "log.retention.ms", "log.retention.minutes", "log.retention.hours"}

// retentionConfigured reports whether settings (key=value) limit
// retention.
func retentionConfigured(settings []string) bool {
	for _, setting := range settings {
		key, value, _ := strings.Cut(setting, "=")
		if slices.Contains(retentionKeys, strings.TrimSpace(key)) && strings.TrimSpace(value) != "-1" {
			return true
		}
	}
	return false
}

// listRetentionStarts lists every partition's log start for the checker,
// once the final read is done.
func (r *runner) listRetentionStarts(ctx context.Context, cluster *Cluster) {
	starts, err := listOffsets(ctx, cluster, r.config.Workload.Topic, (*kadm.Client).ListStartOffsets)
	if err != nil {
		r.problem("listing the log starts retention left: %v", err)
		return
	}
	r.retentionStarts = starts
	r.logf("retention: log starts %v", starts)
}

// retentionOptions permits what retention may have deleted.
func (r *runner) retentionOptions(options *checker.Options) {
	partitions := make([]int32, 0, len(r.retentionStarts))
	for partition := range r.retentionStarts {
		partitions = append(partitions, partition)
	}
	slices.Sort(partitions)
	for _, partition := range partitions {
		if start := r.retentionStarts[partition]; start > 0 {
			options.Deleted = append(options.Deleted, checker.DeletedBelow{
				Partition: history.TopicPartition{Topic: r.config.Workload.Topic, Partition: partition}, Offset: start,
			})
		}
	}
}
