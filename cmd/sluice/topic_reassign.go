package main

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// `sluice topic reassign` and `sluice topic reassignments`: partition
// reassignment (KIP-455), as kafka-reassign-partitions.sh --execute,
// --cancel, --verify and --list do it, through AlterPartitionReassignments
// and ListPartitionReassignments.

const (
	// reassignWaitDefault is --timeout's default: how long --wait waits
	// for the reassignments to complete.
	reassignWaitDefault = 60 * time.Second
	// reassignPollInterval spaces --wait's ListPartitionReassignments and
	// Metadata requests.
	reassignPollInterval = 250 * time.Millisecond
	// reassignmentFileVersion is the one version of
	// kafka-reassign-partitions.sh's JSON format.
	reassignmentFileVersion = 1
	// anyLogDir is the log_dirs entry that lets the broker choose: the
	// only one Sluice, with its one data directory, takes.
	anyLogDir = "any"
)

// topicReassign asks for the reassignments (AlterPartitionReassignments),
// prints each partition's outcome, and with --wait follows the accepted
// ones until they complete, then prints where each partition's replicas,
// leader and ISR are. It exits 1 if any partition was refused or a wait
// ran out.
func topicReassign(admin *kadm.Client, o reassignOptions, topics []string) int {
	plan, err := planReassign(o, topics)
	if err != nil {
		fmt.Fprintln(os.Stderr, "sluice topic reassign:", err)
		return 2
	}
	ctx, cancel := context.WithTimeout(context.Background(), adminTimeout)
	defer cancel()
	// The replicas each partition will have once done, for --wait: the
	// target, or for a cancellation the replicas without those it was
	// adding (known only if it is listed now).
	expected := map[string][]int32{}
	if o.wait {
		for _, r := range plan {
			expected[r.name()] = r.Replicas
		}
		if err := expectCancelled(ctx, admin, plan, expected); err != nil {
			fmt.Fprintln(os.Stderr, "sluice topic reassign:", err)
			return 1
		}
	}
	req := kadm.AlterPartitionAssignmentsReq{}
	for _, r := range plan {
		req.Assign(r.Topic, r.Partition, r.Replicas)
	}
	if o.fixedReplicationFactor {
		ctx = kadm.ForbidAlterRf(ctx)
	}
	results, err := admin.AlterPartitionAssignments(ctx, req)
	if err != nil {
		fmt.Fprintln(os.Stderr, "sluice topic reassign:", err)
		return 1
	}
	status := 0
	var accepted []reassignment
	for _, r := range plan {
		result, ok := results[r.Topic][r.Partition]
		switch {
		case !ok:
			fmt.Fprintf(os.Stderr, "%s: the broker did not answer for this partition\n", r.name())
			status = 1
		case result.Err != nil:
			fmt.Fprintf(os.Stderr, "%s: %v %s\n", r.name(), result.Err, result.ErrMessage)
			status = 1
		case r.Replicas == nil:
			fmt.Printf("%s: reassignment cancelled\n", r.name())
			accepted = append(accepted, r)
		default:
			fmt.Printf("%s: reassignment to %v started\n", r.name(), r.Replicas)
			accepted = append(accepted, r)
		}
	}
	if o.wait && len(accepted) > 0 {
		if !waitReassigned(admin, accepted, expected, o.timeout) {
			status = 1
		}
	}
	return status
}

// expectCancelled fills in, for each cancellation of plan, the replicas
// its partition keeps: those the reassignment listed now is not adding.
func expectCancelled(ctx context.Context, admin *kadm.Client, plan []reassignment, expected map[string][]int32) error {
	set := kadm.TopicsSet{}
	for _, r := range plan {
		if r.Replicas == nil {
			set.Add(r.Topic, r.Partition)
		}
	}
	if len(set) == 0 {
		return nil
	}
	listed, err := admin.ListPartitionReassignments(ctx, set)
	if err != nil {
		return fmt.Errorf("listing the reassignments to cancel: %w", err)
	}
	for _, l := range listed.Sorted() {
		var keep []int32
		for _, id := range l.Replicas {
			if !slices.Contains(l.AddingReplicas, id) {
				keep = append(keep, id)
			}
		}
		expected[fmt.Sprintf("%s-%d", l.Topic, l.Partition)] = keep
	}
	return nil
}

// waitReassigned polls ListPartitionReassignments until none of the
// partitions is listed, then Metadata until every one shows the replicas
// expected of it (a broker's metadata may trail the controller's), and
// prints each partition's replicas, leader and ISR. It reports whether
// that happened within timeout.
func waitReassigned(admin *kadm.Client, partitions []reassignment, expected map[string][]int32, timeout time.Duration) bool {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	set := kadm.TopicsSet{}
	for _, r := range partitions {
		set.Add(r.Topic, r.Partition)
	}
	var inProgress kadm.ListPartitionReassignmentsResponses
	var lastErr error
	reported := map[string]bool{}
	for {
		listed, err := admin.ListPartitionReassignments(ctx, set)
		lastErr = err
		if err == nil {
			inProgress = listed
			for _, r := range partitions {
				if _, listed := listed[r.Topic][r.Partition]; !listed && !reported[r.name()] {
					if r.Replicas == nil {
						fmt.Printf("%s: no longer being reassigned\n", r.name())
					} else {
						fmt.Printf("%s: reassignment complete\n", r.name())
					}
					reported[r.name()] = true
				}
			}
			if len(reported) == len(partitions) {
				break
			}
		}
		if !pause(ctx) {
			fmt.Fprintf(os.Stderr, "sluice topic reassign: still in progress after %v:\n", timeout)
			for _, l := range inProgress.Sorted() {
				fmt.Fprintf(os.Stderr, "  %s-%d: replicas %v, adding %v, removing %v\n", l.Topic, l.Partition, l.Replicas, l.AddingReplicas, l.RemovingReplicas)
			}
			if lastErr != nil {
				fmt.Fprintf(os.Stderr, "  (last listing failed: %v)\n", lastErr)
			}
			return false
		}
	}

	topics := set.Topics()
	var shown *kadm.Metadata
	for {
		metadata, err := admin.Metadata(ctx, topics...)
		lastErr = err
		if err == nil {
			shown = &metadata
			lagging := false
			for _, r := range partitions {
				if !metadataShows(metadata, r, expected[r.name()]) {
					lagging = true
				}
			}
			if !lagging {
				printPartitions(metadata, partitions)
				return true
			}
		}
		if !pause(ctx) {
			fmt.Fprintf(os.Stderr, "sluice topic reassign: the reassignments completed, but after %v Metadata does not show each partition led on the replicas expected:\n", timeout)
			for _, r := range partitions {
				fmt.Fprintf(os.Stderr, "  %s: expected replicas %v\n", r.name(), expected[r.name()])
			}
			if shown != nil {
				printPartitions(*shown, partitions)
			}
			if lastErr != nil {
				fmt.Fprintf(os.Stderr, "  (last Metadata request failed: %v)\n", lastErr)
			}
			return false
		}
	}
}

// metadataShows reports whether metadata shows partition r led, with
// exactly the replicas want, in order (the controller keeps a target's
// order: its first replica is the preferred leader); any replicas if want
// is nil.
func metadataShows(metadata kadm.Metadata, r reassignment, want []int32) bool {
	p, ok := metadata.Topics[r.Topic].Partitions[r.Partition]
	if !ok || p.Err != nil || p.Leader < 0 {
		return false
	}
	return want == nil || slices.Equal(p.Replicas, want)
}

// printPartitions prints each partition's leader, replicas and ISR as
// metadata shows them.
func printPartitions(metadata kadm.Metadata, partitions []reassignment) {
	w := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', 0)
	defer w.Flush()
	for _, r := range partitions {
		p, ok := metadata.Topics[r.Topic].Partitions[r.Partition]
		if !ok {
			fmt.Fprintf(w, "  %s\tnot in the metadata\n", r.name())
			continue
		}
		fmt.Fprintf(w, "  %s\tleader %d\treplicas %v\tisr %v\n", r.name(), p.Leader, p.Replicas, p.ISR)
	}
}

// pause waits reassignPollInterval, or reports false if ctx ends first.
func pause(ctx context.Context) bool {
	timer := time.NewTimer(reassignPollInterval)
	defer timer.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-timer.C:
		return true
	}
}

// topicReassignments lists the reassignments in progress
// (ListPartitionReassignments), of the topics named or of every topic, as
// kafka-reassign-partitions.sh --list does.
func topicReassignments(ctx context.Context, admin *kadm.Client, client kmsg.Requestor, topics []string) int {
	req := kmsg.NewPtrListPartitionReassignmentsRequest()
	req.TimeoutMillis = int32(adminTimeout.Milliseconds())
	if len(topics) > 0 {
		// Named topics: every partition of each.
		details, err := admin.ListTopics(ctx, topics...)
		if err != nil {
			fmt.Fprintln(os.Stderr, "sluice topic reassignments:", err)
			return 1
		}
		req.Topics = []kmsg.ListPartitionReassignmentsRequestTopic{}
		for _, name := range topics {
			t, ok := details[name]
			if !ok || t.Err != nil {
				fmt.Fprintf(os.Stderr, "%s: %v\n", name, kerr.UnknownTopicOrPartition)
				return 1
			}
			rt := kmsg.NewListPartitionReassignmentsRequestTopic()
			rt.Topic = name
			rt.Partitions = t.Partitions.Numbers()
			req.Topics = append(req.Topics, rt)
		}
	} // else nil: every topic
	resp, err := req.RequestWith(ctx, client)
	if err != nil {
		fmt.Fprintln(os.Stderr, "sluice topic reassignments:", err)
		return 1
	}
	if err := kerr.ErrorForCode(resp.ErrorCode); err != nil {
		message := ""
		if resp.ErrorMessage != nil {
			message = *resp.ErrorMessage
		}
		fmt.Fprintf(os.Stderr, "sluice topic reassignments: %v %s\n", err, message)
		return 1
	}
	type listed struct {
		topic string
		p     kmsg.ListPartitionReassignmentsResponseTopicPartition
	}
	var all []listed
	for _, t := range resp.Topics {
		for _, p := range t.Partitions {
			all = append(all, listed{t.Topic, p})
		}
	}
	if len(all) == 0 {
		fmt.Println("no reassignment in progress")
		return 0
	}
	slices.SortFunc(all, func(a, b listed) int {
		if c := strings.Compare(a.topic, b.topic); c != 0 {
			return c
		}
		return int(a.p.Partition - b.p.Partition)
	})
	w := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', 0)
	defer w.Flush()
	for _, l := range all {
		fmt.Fprintf(w, "%s-%d\treplicas %v\tadding %v\tremoving %v\n", l.topic, l.p.Partition, l.p.Replicas, l.p.AddingReplicas, l.p.RemovingReplicas)
	}
	return 0
}
