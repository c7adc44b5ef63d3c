package main

// Reading `sluice topic reassign`'s flags and kafka-reassign-partitions.sh's
// JSON file into the reassignments to ask for (topic_reassign.go sends
// them).

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"
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
