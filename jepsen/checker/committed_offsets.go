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
	// op is the history index of the op that names the operation.
	op int
}

func (input *registerInput) historyOp() int { return input.op }

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
		return output.(int64) == offset, state // unchanged: no new box
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
	budget := a.options.searchBudget()
	registers := a.registerOperations()
	for _, key := range sortedGroupPartitions(registers) {
		s := a.committedOffsetSearch(key, registers[key])
		outcome := s.run(budget)
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
				Detail:    outcome.budget,
			})
		default:
			panic(fmt.Sprintf("checker: porcupine returned %q", outcome.result))
		}
	}
	return findings, inconclusive
}

// registerOperations maps every (group, partition) a commit or an ok
// fetch names to the positions in a.operations of the operations naming
// it, in invoke order: each register's search walks only its own.
func (a *analysis) registerOperations() map[groupPartition][]int {
	registers := map[groupPartition][]int{}
	add := func(at int, commits []history.Commit) {
		for _, commit := range commits {
			key := groupPartition{commit.Group, commit.Partition}
			positions := registers[key]
			if n := len(positions); n == 0 || positions[n-1] != at {
				registers[key] = append(positions, at)
			}
		}
	}
	for at, operation := range a.operations {
		switch {
		case operation.F == history.FuncCommit:
			add(at, a.ops[operation.Invoke].Commits)
		case operation.F == history.FuncFetchCommitted && operation.Type == history.OK:
			add(at, a.ops[operation.Complete].Commits)
		}
	}
	return registers
}

// sortedGroupPartitions lists the registers' keys, sorted.
func sortedGroupPartitions(registers map[groupPartition][]int) []groupPartition {
	keys := make([]groupPartition, 0, len(registers))
	for key := range registers {
		keys = append(keys, key)
	}
	slices.SortFunc(keys, groupPartition.compare)
	return keys
}

// committedOffsetSearch gathers one register's operations: ok and unknown
// commits as writes, ok fetches as reads. Failed commits never happened.
// positions are those registerOperations lists for key.
func (a *analysis) committedOffsetSearch(key groupPartition, positions []int) *search {
	// About an operation per position: room for them from the start.
	s := &search{model: committedOffsetModel, operations: make([]porcupine.Operation, 0, len(positions))}
	for _, at := range positions {
		operation := a.operations[at]
		if operation.Type == history.Fail {
			continue
		}
		invoke := &a.ops[operation.Invoke]
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
						&registerInput{write: true, offset: commit.Offset, op: op}, int64(0))
				}
			}
		case operation.F == history.FuncFetchCommitted && operation.Type == history.OK:
			completion := &a.ops[operation.Complete]
			for _, commit := range completion.Commits {
				if (groupPartition{commit.Group, commit.Partition}) == key {
					s.addOperation(operation.Process, invoke.Time, completion.Time,
						&registerInput{op: completion.Index}, commit.Offset)
				}
			}
		}
	}
	s.operations = withoutRedundantUnknownWrites(s.operations)
	return s
}

// withoutRedundantUnknownWrites drops the unknown-outcome commits (info,
// or never answered) of one offset that no linearization can need, and
// keeps the rest in order. A member retrying one commit through a
// coordinator failover records an info per try, all writing the same
// offset, each of which may take effect at any moment from its invoke:
// twenty of them made the search try every subset (regression
// cluster-inconclusive-187414).
//
// Why it is exact. Such a write of v that is linearized while the register
// already holds v changes nothing, and can move to the end of the
// linearization, where nothing observes it (it never returns). The others
// each turn a different value into v, so between any two of them a write
// of another value is linearized, one that returns at or after the
// earliest invoke t of the unknown writes of v (porcupine puts a call
// before a return of the same instant, so one returning at t overlaps
// them). So at most 1 + (the writes of other values returning at or after
// t) of them are ever needed, and the
// earliest-invoked ones can stand in for any that are: the i-th needed,
// in linearization order, comes after i writes of v invoked before it.
// Dropping the others neither hides a violation nor invents one.
func withoutRedundantUnknownWrites(operations []porcupine.Operation) []porcupine.Operation {
	unknownWrites := map[int64][]int{} // offset -> positions, in invoke order
	for i, operation := range operations {
		if input := operation.Input.(*registerInput); input.write && operation.Return == returnTimeUnknown {
			unknownWrites[input.offset] = append(unknownWrites[input.offset], i)
		}
	}
	drop := map[int]bool{}
	for offset, positions := range unknownWrites { // order-independent: fills a set
		slices.SortStableFunc(positions, func(x, y int) int { return cmp.Compare(operations[x].Call, operations[y].Call) })
		earliest := operations[positions[0]].Call
		needed := 1
		for _, operation := range operations {
			if input := operation.Input.(*registerInput); input.write && input.offset != offset && operation.Return >= earliest {
				needed++
			}
		}
		for _, position := range positions[min(needed, len(positions)):] {
			drop[position] = true
		}
	}
	if len(drop) == 0 {
		return operations
	}
	kept := make([]porcupine.Operation, 0, len(operations)-len(drop))
	for i, operation := range operations {
		if !drop[i] {
			kept = append(kept, operation)
		}
	}
	return kept
}
