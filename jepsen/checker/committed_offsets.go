package checker

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/anishathalye/porcupine"

	"sluice/jepsen/history"
)

// groupPartition is one consumer group's committed offset for one
// partition: a register.
type groupPartition struct {
	group     string
	partition history.TopicPartition
}

func (g groupPartition) compare(other groupPartition) int {
	return cmp.Or(strings.Compare(g.group, other.group), g.partition.Compare(other.partition))
}

// registerInput is one operation on a committed-offset register: a write
// of offset, or a read whose output is the offset read.
type registerInput struct {
	write  bool
	offset int64
}

// committedOffsetModel is the sequential specification of one committed
// offset: a register holding history.OffsetUnknown until the first commit.
var committedOffsetModel = porcupine.Model{
	Init: func() any { return history.OffsetUnknown },
	Step: func(state, input, output any) (bool, any) {
		offset := state.(int64)
		operation := input.(*registerInput)
		if operation.write {
			return true, operation.offset
		}
		return output.(int64) == offset, offset
	},
	Hash: func(state any) uint64 { return uint64(state.(int64)) },
	DescribeOperation: func(input, output any) string {
		operation := input.(*registerInput)
		if operation.write {
			return fmt.Sprintf("commit %d", operation.offset)
		}
		return fmt.Sprintf("fetch → %d", output.(int64))
	},
	DescribeState:             func(state any) string { return fmt.Sprint(state.(int64)) },
	DescribeOperationMetadata: describeMetadata,
}

// committedOffsets runs porcupine on every (group, partition) register.
func (a *analysis) committedOffsets() ([]Finding, []Inconclusive) {
	var findings []Finding
	var inconclusive []Inconclusive
	timeout := a.options.linearizabilityTimeout()
	for _, key := range a.groupPartitions() {
		s := a.committedOffsetSearch(key)
		outcome := s.run(timeout)
		switch outcome.result {
		case porcupine.Ok:
		case porcupine.Illegal:
			findings = append(findings, Finding{
				Anomaly:   NonlinearizableCommittedOffset,
				Status:    Failure,
				Partition: key.partition,
				Group:     key.group,
				Ops:       opList(outcome.leftOut...),
				Detail:    s.describeIllegal(outcome),
			})
		case porcupine.Unknown:
			inconclusive = append(inconclusive, Inconclusive{
				Anomaly:   NonlinearizableCommittedOffset,
				Partition: key.partition,
				Group:     key.group,
				Detail:    fmt.Sprintf("porcupine ran out of its %s budget on %d operations", timeout, len(s.operations)),
			})
		default:
			panic(fmt.Sprintf("checker: porcupine returned %q", outcome.result))
		}
	}
	return findings, inconclusive
}

// groupPartitions lists every (group, partition) a commit or an ok fetch
// names, sorted.
func (a *analysis) groupPartitions() []groupPartition {
	var keys []groupPartition
	for _, operation := range a.operations {
		switch {
		case operation.F == history.FuncCommit:
			for _, commit := range a.ops[operation.Invoke].Commits {
				keys = append(keys, groupPartition{commit.Group, commit.Partition})
			}
		case operation.F == history.FuncFetchCommitted && operation.Type == history.OK:
			for _, commit := range a.ops[operation.Complete].Commits {
				keys = append(keys, groupPartition{commit.Group, commit.Partition})
			}
		}
	}
	slices.SortFunc(keys, groupPartition.compare)
	return slices.Compact(keys)
}

// committedOffsetSearch gathers one register's operations: ok and unknown
// commits as writes, ok fetches as reads. Failed commits never happened.
func (a *analysis) committedOffsetSearch(key groupPartition) *search {
	s := &search{model: committedOffsetModel}
	for _, operation := range a.operations {
		if operation.Type == history.Fail {
			continue
		}
		invoke := a.ops[operation.Invoke]
		switch {
		case operation.F == history.FuncCommit:
			ret, op := int64(returnTimeUnknown), operation.Invoke
			if operation.Type == history.OK {
				ret, op = a.ops[operation.Complete].Time, operation.Complete
			} else if operation.Complete != history.NoCompletion {
				op = operation.Complete
			}
			for _, commit := range invoke.Commits {
				if (groupPartition{commit.Group, commit.Partition}) == key {
					s.addOperation(operation.Process, invoke.Time, ret,
						&registerInput{write: true, offset: commit.Offset}, int64(0), op)
				}
			}
		case operation.F == history.FuncFetchCommitted && operation.Type == history.OK:
			completion := a.ops[operation.Complete]
			for _, commit := range completion.Commits {
				if (groupPartition{commit.Group, commit.Partition}) == key {
					s.addOperation(operation.Process, invoke.Time, completion.Time,
						&registerInput{}, commit.Offset, completion.Index)
				}
			}
		}
	}
	return s
}
