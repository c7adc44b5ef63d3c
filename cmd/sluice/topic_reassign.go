package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
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

// reassignment is one partition's requested move: to Replicas, or, when
// Replicas is nil, the cancellation of the reassignment in progress.
type reassignment struct {
	Topic     string
	Partition int32
	Replicas  []int32
}

func (r reassignment) name() string { return fmt.Sprintf("%s-%d", r.Topic, r.Partition) }

// reassignOptions are `sluice topic reassign`'s flags.
type reassignOptions struct {
	// partition is --partition, -1 when not given.
	partition int
	// replicas is --replicas as typed, empty when not given.
	replicas string
	cancel   bool
	jsonFile string
	wait     bool
	timeout  time.Duration
	// fixedReplicationFactor is --disallow-replication-factor-change.
	fixedReplicationFactor bool
}

// planReassign turns the flags and the topics named after them into the
// reassignments to ask for, or says what is wrong with them.
func planReassign(o reassignOptions, topics []string) ([]reassignment, error) {
	if o.timeout <= 0 {
		return nil, fmt.Errorf("--timeout %v: must be positive", o.timeout)
	}
	if o.jsonFile != "" {
		if len(topics) > 0 || o.partition >= 0 || o.replicas != "" {
			return nil, errors.New("--reassignment-json-file names the partitions and their replicas: give no topic, --partition or --replicas with it")
		}
		data, err := os.ReadFile(o.jsonFile)
		if err != nil {
			return nil, err
		}
		plan, err := parseReassignmentJSON(data, o.cancel)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", o.jsonFile, err)
		}
		return plan, nil
	}
	for _, arg := range topics[min(1, len(topics)):] {
		if strings.HasPrefix(arg, "-") {
			return nil, fmt.Errorf("%s after the topic: flags go before it", arg)
		}
	}
	switch {
	case len(topics) != 1:
		return nil, fmt.Errorf("name one topic, after the flags (got %d: %q)", len(topics), topics)
	case o.partition < 0:
		return nil, errors.New("give --partition N (or --reassignment-json-file FILE)")
	case o.partition > 1<<31-1:
		return nil, fmt.Errorf("--partition %d: too large", o.partition)
	case o.cancel && o.replicas != "":
		return nil, errors.New("give --replicas to start a reassignment or --cancel to stop one, not both")
	case !o.cancel && o.replicas == "":
		return nil, errors.New("give --replicas 1,2,3 (the partition's new replicas, the preferred leader first) or --cancel")
	}
	r := reassignment{Topic: topics[0], Partition: int32(o.partition)}
	if !o.cancel {
		replicas, err := parseReplicaList(o.replicas)
		if err != nil {
			return nil, fmt.Errorf("--replicas %q: %w", o.replicas, err)
		}
		r.Replicas = replicas
	}
	return []reassignment{r}, nil
}

// parseReplicaList reads a comma-separated list of broker ids, such as
// "3,1,2": at least one, each a non-negative integer, none twice.
func parseReplicaList(text string) ([]int32, error) {
	var replicas []int32
	for field := range strings.SplitSeq(text, ",") {
		field = strings.TrimSpace(field)
		if field == "" {
			return nil, errors.New("expected broker ids separated by commas, such as 1,2,3")
		}
		id, err := strconv.ParseInt(field, 10, 32)
		if err != nil || id < 0 {
			return nil, fmt.Errorf("%q is not a broker id (a non-negative integer)", field)
		}
		replicas = append(replicas, int32(id))
	}
	return replicas, checkReplicas(replicas)
}

// checkReplicas: at least one replica, none negative, none twice.
func checkReplicas(replicas []int32) error {
	if len(replicas) == 0 {
		return errors.New("no replicas: a partition needs at least one")
	}
	for i, id := range replicas {
		if id < 0 {
			return fmt.Errorf("broker id %d is negative", id)
		}
		if slices.Contains(replicas[:i], id) {
			return fmt.Errorf("broker %d is named twice", id)
		}
	}
	return nil
}

// reassignmentFile is kafka-reassign-partitions.sh's JSON format:
//
//	{"version":1,"partitions":[{"topic":"orders","partition":0,"replicas":[1,2],"log_dirs":["any","any"]}]}
//
// version may be left out (it means 1); log_dirs too.
type reassignmentFile struct {
	Version    *int              `json:"version"`
	Partitions []json.RawMessage `json:"partitions"`
}

type reassignmentFileEntry struct {
	Topic     *string  `json:"topic"`
	Partition *int32   `json:"partition"`
	Replicas  *[]int32 `json:"replicas"`
	LogDirs   []string `json:"log_dirs"`
}

// parseReassignmentJSON reads a reassignment file. With cancel, each
// entry's replicas are not needed (and ignored if present): the file
// names the partitions whose reassignments to cancel, as
// kafka-reassign-partitions.sh --cancel reads it.
func parseReassignmentJSON(data []byte, cancel bool) ([]reassignment, error) {
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, errors.New(`empty; want {"version":1,"partitions":[{"topic":"orders","partition":0,"replicas":[1,2]}]}`)
	}
	var file reassignmentFile
	if err := decodeStrictly(data, &file); err != nil {
		return nil, fmt.Errorf("not a reassignment file: %w", err)
	}
	if file.Version != nil && *file.Version != reassignmentFileVersion {
		return nil, fmt.Errorf("version %d: only version %d is supported", *file.Version, reassignmentFileVersion)
	}
	if len(file.Partitions) == 0 {
		return nil, errors.New(`no partitions: want "partitions":[{"topic":"orders","partition":0,"replicas":[1,2]}, ...]`)
	}
	var plan []reassignment
	for i, raw := range file.Partitions {
		var entry reassignmentFileEntry
		if err := decodeStrictly(raw, &entry); err != nil {
			return nil, fmt.Errorf("partitions[%d]: %w", i, err)
		}
		r, err := entry.reassignment(cancel)
		if err != nil {
			return nil, fmt.Errorf("partitions[%d]: %w", i, err)
		}
		for _, earlier := range plan {
			if earlier.Topic == r.Topic && earlier.Partition == r.Partition {
				return nil, fmt.Errorf("partitions[%d]: %s is named more than once", i, r.name())
			}
		}
		plan = append(plan, r)
	}
	return plan, nil
}

func (e reassignmentFileEntry) reassignment(cancel bool) (reassignment, error) {
	switch {
	case e.Topic == nil || *e.Topic == "":
		return reassignment{}, errors.New(`no "topic"`)
	case e.Partition == nil:
		return reassignment{}, fmt.Errorf(`topic %q: no "partition"`, *e.Topic)
	case *e.Partition < 0:
		return reassignment{}, fmt.Errorf("topic %q: partition %d is negative", *e.Topic, *e.Partition)
	}
	r := reassignment{Topic: *e.Topic, Partition: *e.Partition}
	if cancel {
		return r, nil
	}
	if e.Replicas == nil {
		return reassignment{}, fmt.Errorf(`%s: no "replicas" (a list of broker ids; to cancel, use --cancel)`, r.name())
	}
	if err := checkReplicas(*e.Replicas); err != nil {
		return reassignment{}, fmt.Errorf("%s: replicas %v: %w", r.name(), *e.Replicas, err)
	}
	if e.LogDirs != nil {
		if len(e.LogDirs) != len(*e.Replicas) {
			return reassignment{}, fmt.Errorf("%s: %d log_dirs for %d replicas: give one per replica, or none", r.name(), len(e.LogDirs), len(*e.Replicas))
		}
		for _, dir := range e.LogDirs {
			if dir != anyLogDir {
				return reassignment{}, fmt.Errorf("%s: log_dirs entry %q: a Sluice broker has one data directory, so only %q is supported", r.name(), dir, anyLogDir)
			}
		}
	}
	r.Replicas = *e.Replicas
	return r, nil
}

// decodeStrictly decodes one JSON value into v, refusing unknown fields
// (a misspelt "replicas" must not read as a cancellation) and anything
// after the value.
func decodeStrictly(data []byte, v any) error {
	decoder := json.NewDecoder(bytes.NewReader(data))
	decoder.DisallowUnknownFields()
	if err := decoder.Decode(v); err != nil {
		return err
	}
	if _, err := decoder.Token(); !errors.Is(err, io.EOF) {
		return errors.New("unexpected data after the JSON object")
	}
	return nil
}

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
