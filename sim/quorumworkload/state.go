package quorumworkload

import (
	"fmt"
	"strconv"

	"sluice/core/metadata"
)

// stateMachine is one node process's replicated state: the values of the
// committed records it has, by offset, in order, whether delivered through
// the CommitFunc or restored from a snapshot. Every change is reported to
// the checker, which holds it against the one committed sequence.
type stateMachine struct {
	run      *run
	node     int32
	lifetime int
	entries  []entry
	// lastOffset is the offset of the last record delivered or restored.
	lastOffset int64
}

// entry is one committed record: its offset and unique value.
type entry struct {
	offset int64
	value  string
}

func newStateMachine(r *run, node int32, lifetime int) *stateMachine {
	return &stateMachine{run: r, node: node, lifetime: lifetime, lastOffset: -1}
}

// apply is the node's quorum.CommitFunc.
func (s *stateMachine) apply(offset int64, r metadata.Record) {
	if r.Config == nil || r.Config.Value == nil {
		s.run.fail("agreement", fmt.Sprintf("node %d delivered a record at %d that no one proposed: %+v", s.node, offset, r))
		return
	}
	if offset <= s.lastOffset {
		s.run.fail("order", fmt.Sprintf("node %d (lifetime %d) delivered offset %d after %d", s.node, s.lifetime, offset, s.lastOffset))
		return
	}
	value := *r.Config.Value
	s.entries = append(s.entries, entry{offset: offset, value: value})
	s.lastOffset = offset
	s.run.checker.committed(offset, value, fmt.Sprintf("delivered on node %d", s.node))
}

// Snapshot implements quorum.Snapshotter: the state as records, each with
// its offset as the resource name.
func (s *stateMachine) Snapshot() (int64, []metadata.Record) {
	records := make([]metadata.Record, 0, len(s.entries))
	for _, e := range s.entries {
		value := e.value
		records = append(records, metadata.Record{Config: &metadata.ConfigRecord{
			ResourceType: metadata.ResourceTopic,
			ResourceName: strconv.FormatInt(e.offset, 10),
			Name:         recordName,
			Value:        &value,
		}})
	}
	return s.lastOffset, records
}

// Restore implements quorum.Snapshotter.
func (s *stateMachine) Restore(lastOffset int64, records []metadata.Record) error {
	entries := make([]entry, 0, len(records))
	for _, r := range records {
		if r.Config == nil || r.Config.Value == nil {
			return fmt.Errorf("quorumworkload: snapshot record %+v", r)
		}
		offset, err := strconv.ParseInt(r.Config.ResourceName, 10, 64)
		if err != nil {
			return fmt.Errorf("quorumworkload: snapshot record offset %q", r.Config.ResourceName)
		}
		entries = append(entries, entry{offset: offset, value: *r.Config.Value})
	}
	for i, e := range entries {
		if i > 0 && e.offset <= entries[i-1].offset {
			s.run.fail("order", fmt.Sprintf("node %d restored a snapshot with offset %d after %d", s.node, e.offset, entries[i-1].offset))
		}
		s.run.checker.committed(e.offset, e.value, fmt.Sprintf("restored on node %d", s.node))
	}
	if lastOffset < s.lastOffset {
		s.run.fail("order", fmt.Sprintf("node %d restored a snapshot at %d over state at %d", s.node, lastOffset, s.lastOffset))
	}
	s.entries, s.lastOffset = entries, lastOffset
	return nil
}

// recordName is the config name of every record the driver proposes.
const recordName = "sim"
