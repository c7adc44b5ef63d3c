package checker

import (
	"cmp"
	"slices"

	"github.com/anishathalye/porcupine"

	"sluice/jepsen/history"
)

// logSearch gathers one partition's operations for the log model: ok and
// unknown sends as appends, ok polls as reads. Failed sends never happened
// and are left out.
func (a *analysis) logSearch(tp history.TopicPartition) *search {
	return a.newLogSearch(tp, 0)
}

// logSearchWithDeletedCopies is logSearch that also lets every send's
// retry have written its value a second time, in the part of the log
// retention deleted before anyone read it. An idempotent producer's
// retry is written again when the leader has no state for the producer:
// Kafka drops a producer whose last batch is below the log start, a
// replica rebuilt from the leader's log start never had it, and a
// leader without it accepts any sequence (as Kafka does since KIP-360).
// The duplicate check permits such a copy when a poll saw it, and this
// search places it where it was seen (seenDeletedCopies); one nobody saw
// shows only as one record too many in the deleted offsets.
func (a *analysis) logSearchWithDeletedCopies(tp history.TopicPartition) *search {
	return a.newLogSearch(tp, a.logStart[tp])
}

// gapFillers counts the unobserved appends and deleted copies a search
// still offers. Either only matters for filling offsets nobody saw (see
// logModel), one each; any invoked earlier can do whatever one invoked
// later can, so the earliest invoked, as many as there are such offsets,
// are all the search needs; operations are in invoke order.
type gapFillers struct {
	unobserved, copies int64
}

func (a *analysis) newLogSearch(tp history.TopicPartition, deletedBelow int64) *search {
	log := a.logs[tp]
	// About an operation per send or poll: room for them from the start.
	s := &search{model: logModel(deletedBelow), operations: make([]porcupine.Operation, 0, len(log.operations))}
	pinned := a.polledOffsets(tp)
	seen := a.seenDeletedCopies(tp, deletedBelow)
	needed := gapFillers{unobserved: log.unknownBelowHighest(), copies: log.unknownBelow(deletedBelow)}
	for _, at := range log.operations {
		operation := a.operations[at]
		switch operation.F {
		case history.FuncSend:
			a.addAppends(s, tp, operation, pinned, seen, &needed)
		case history.FuncPoll:
			if operation.Type == history.OK {
				a.addReads(s, tp, operation)
			}
		}
	}
	return s
}

// addAppends adds one send's appends to tp. Where polls saw a value at
// exactly one offset, that is where its append landed (values are unique),
// so an append whose offset is otherwise unknown is pinned there: that
// spares porcupine trying it everywhere else and lets it fill the gap
// below it (see logModel).
//
// A send of several records is one batch, appended whole at consecutive
// offsets, and is searched so: each run of its records that lands
// together is one append of consecutive values (logInput.more), not one
// per record. A run is records at consecutive known offsets (acknowledged,
// or read once), or records of unknown outcome read at several offsets (a
// batch written twice), free to land anywhere. One append per record had
// porcupine try every order of a batch's records, where unobserved sends
// let an out-of-order record fill the gap below it: a batch of 12 written
// twice ran out of a 5 s budget on 13 operations, and cluster seed
// 4304799 (batches of 7 and 8 under retention) on 1,115.
//
// A value seen at several offsets, all but the highest deleted (seen, for
// the search allowing deleted copies), was written again by a retry after
// retention deleted its first copy: its append lands at its acknowledged
// offset, or else its highest, and each other offset it was seen at gets
// an append of its own (addSeenCopies).
func (a *analysis) addAppends(s *search, tp history.TopicPartition, operation history.Operation, pinned map[string]int64, seen map[string][]int64, needed *gapFillers) {
	if operation.Type == history.Fail {
		return // it never happened
	}
	invoke := &a.ops[operation.Invoke]
	var run *logInput // the run of records landing together, being gathered
	var runReturn int64
	endRun := func() {
		if run == nil {
			return
		}
		s.addOperation(operation.Process, invoke.Time, runReturn, run, nil)
		addDeletedCopy(s, operation, invoke, run.value, needed)
		for _, value := range run.more {
			addDeletedCopy(s, operation, invoke, value, needed)
		}
		run = nil
	}
	// extend adds a record to the run when it lands right after it, and
	// reports whether it did.
	extend := func(value string, offset, ret int64) bool {
		if run == nil || runReturn != ret {
			return false
		}
		switch {
		case run.offset == history.OffsetUnknown && offset == history.OffsetUnknown,
			run.offset != history.OffsetUnknown && offset == run.offset+1+int64(len(run.more)):
			run.more = append(run.more, value)
			return true
		}
		return false
	}
	start := func(input *logInput, ret int64) {
		endRun()
		run, runReturn = input, ret
	}
	for i, send := range invoke.Sends {
		if send.Partition != tp {
			continue
		}
		input := &logInput{kind: appendValue, value: send.Value}
		offset, polledOnce := pinned[send.Value]
		if !polledOnce {
			offset = history.OffsetUnknown
		}
		copies, copied := seen[send.Value]
		if copied {
			offset = copies[len(copies)-1]
		}
		if operation.Type == history.OK {
			completion := &a.ops[operation.Complete]
			if acknowledged := completion.Sends[i].Offset; acknowledged != history.OffsetUnknown {
				offset = acknowledged
			}
			if copied {
				addSeenCopies(s, operation, invoke, send.Value, copies, offset)
			}
			if offset == history.OffsetUnknown {
				// Acknowledged without an offset: alone, anywhere
				// between its invoke and its answer.
				endRun()
				input.offset, input.op = offset, completion.Index
				s.addOperation(operation.Process, invoke.Time, completion.Time, input, nil)
				addDeletedCopy(s, operation, invoke, send.Value, needed)
				continue
			}
			if !extend(send.Value, offset, completion.Time) {
				input.offset, input.op = offset, completion.Index
				start(input, completion.Time)
			}
			continue
		}
		// Unknown outcome: it may take effect at any moment after its
		// invoke, or never.
		op := operation.Invoke
		if operation.Complete != history.NoCompletion {
			op = operation.Complete
		}
		if !a.wasPolled(send.Value) {
			endRun()
			// Unobserved: it only makes one more unplaced append available,
			// and the sooner the better, so it takes effect the instant it
			// is invoked. Its retry may have written it twice, as an
			// acknowledged send's may: it offers a deleted copy too.
			if needed.unobserved > 0 {
				needed.unobserved--
				input.kind, input.offset, input.op = appendUnobserved, history.OffsetUnknown, op
				s.addOperation(operation.Process, invoke.Time, invoke.Time, input, nil)
			}
			addDeletedCopy(s, operation, invoke, send.Value, needed)
			continue
		}
		// Read at one offset (pinned there), or at several: a duplicate,
		// reported as such, free to land anywhere here (or a retry's
		// copies, past a deletion, each at its offset).
		if copied {
			addSeenCopies(s, operation, invoke, send.Value, copies, offset)
		}
		if !extend(send.Value, offset, returnTimeUnknown) {
			input.offset, input.op = offset, op
			start(input, returnTimeUnknown)
		}
	}
	endRun()
}

// addDeletedCopy offers the deleted copy a send's retry may have left,
// while the search still needs any: like an unobserved append, the
// instant the send is invoked. A retry in flight can land after the
// send's answer, so the copy's moment is not bounded by it.
func addDeletedCopy(s *search, operation history.Operation, invoke *history.Op, value string, needed *gapFillers) {
	if needed.copies == 0 {
		return
	}
	needed.copies--
	s.addOperation(operation.Process, invoke.Time, invoke.Time,
		&logInput{kind: appendDeletedCopy, value: value, offset: history.OffsetUnknown, op: operation.Invoke}, nil)
}

// addSeenCopies adds an append of value at each offset it was seen at
// but at: the copies a retry wrote besides the one the send is known by.
// A copy lands between the send's invoke and an unknown moment (a retry
// in flight can land after the send's answer).
func addSeenCopies(s *search, operation history.Operation, invoke *history.Op, value string, offsets []int64, at int64) {
	for _, offset := range offsets {
		if offset != at {
			s.addOperation(operation.Process, invoke.Time, returnTimeUnknown,
				&logInput{kind: appendValue, value: value, offset: offset, op: operation.Invoke}, nil)
		}
	}
}

// seenDeletedCopies maps each value of tp seen at several offsets, all
// but the highest below deletedBelow, to those offsets, ascending: a
// retry written again after retention deleted its first copy, which the
// search allowing deleted copies places at each (see addAppends). None
// when deletedBelow is zero. A value seen twice at or above it is a
// duplicate that deletion does not explain, and is left to fail; so is
// one acknowledged below its highest copy, since the answer a producer
// takes is its last attempt's (an earlier attempt's connection is closed
// before the retry, so its answer never comes).
func (a *analysis) seenDeletedCopies(tp history.TopicPartition, deletedBelow int64) map[string][]int64 {
	if deletedBelow == 0 {
		return nil
	}
	offsets := map[string][]int64{}
	acknowledgedAt := map[string]int64{}
	for _, seen := range a.logs[tp].observations { // by offset, ascending
		if at := offsets[seen.value]; len(at) == 0 || at[len(at)-1] != seen.offset {
			offsets[seen.value] = append(at, seen.offset)
		}
		if !seen.polled {
			acknowledgedAt[seen.value] = seen.offset
		}
	}
	copied := map[string][]int64{}
	for value, at := range offsets { // order-independent: it fills a map
		if acknowledged, ok := acknowledgedAt[value]; ok && acknowledged != at[len(at)-1] {
			continue
		}
		if len(at) > 1 && at[len(at)-2] < deletedBelow {
			copied[value] = at
		}
	}
	return copied
}

func (a *analysis) addReads(s *search, tp history.TopicPartition, operation history.Operation) {
	invoke, completion := &a.ops[operation.Invoke], &a.ops[operation.Complete]
	for _, poll := range completion.Polls {
		if poll.Partition != tp {
			continue
		}
		switch {
		case len(poll.Records) > 0:
			s.addOperation(operation.Process, invoke.Time, completion.Time,
				&logInput{kind: readRecords, records: descending(poll.Records), op: completion.Index}, nil)
		case poll.From != history.OffsetUnknown:
			s.addOperation(operation.Process, invoke.Time, completion.Time,
				&logInput{kind: readNothing, from: poll.From, op: completion.Index}, nil)
		}
	}
}

// descending copies records into descending offset order, records at one
// offset keeping their order. A poll's records are almost always in
// strictly ascending order already, where reversing them does the same
// as the stable sort, cheaper.
func descending(records []history.Record) []history.Record {
	sorted := slices.Clone(records)
	if strictlyAscending(sorted) {
		slices.Reverse(sorted)
		return sorted
	}
	slices.SortStableFunc(sorted, func(x, y history.Record) int { return cmp.Compare(y.Offset, x.Offset) })
	return sorted
}

// strictlyAscending reports whether every record's offset is above the
// one before it.
func strictlyAscending(records []history.Record) bool {
	for i := 1; i < len(records); i++ {
		if records[i].Offset <= records[i-1].Offset {
			return false
		}
	}
	return true
}

// polledOffsets maps each value polled from tp at exactly one offset to
// that offset.
func (a *analysis) polledOffsets(tp history.TopicPartition) map[string]int64 {
	observations := a.logs[tp].observations
	// At most one value per observation: sized so that filling it never
	// grows it.
	pinned := make(map[string]int64, len(observations))
	conflicting := map[string]bool{}
	for _, seen := range observations {
		if !seen.polled || conflicting[seen.value] {
			continue
		}
		if offset, ok := pinned[seen.value]; ok && offset != seen.offset {
			delete(pinned, seen.value)
			conflicting[seen.value] = true
			continue
		}
		pinned[seen.value] = seen.offset
	}
	return pinned
}
