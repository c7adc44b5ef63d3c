package checker

import (
	"cmp"
	"slices"

	"sluice/jepsen/history"
)

// logSearch gathers one partition's operations for the log model: ok and
// unknown sends as appends, ok polls as reads. Failed sends never happened
// and are left out.
func (a *analysis) logSearch(tp history.TopicPartition) *search {
	s := &search{model: logModel}
	pinned := a.polledOffsets(tp)
	// Unobserved appends only matter for filling offsets below the
	// highest known one that nobody saw (see logModel), one each. Any of
	// them invoked earlier can do whatever one invoked later can, so the
	// earliest invoked, as many as there are such gaps, are all the search
	// needs; operations are in invoke order.
	log := a.logs[tp]
	unobservedNeeded := log.unknownBelowHighest()
	for _, at := range log.operations {
		operation := a.operations[at]
		switch operation.F {
		case history.FuncSend:
			a.addAppends(s, tp, operation, pinned, &unobservedNeeded)
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
func (a *analysis) addAppends(s *search, tp history.TopicPartition, operation history.Operation, pinned map[string]int64, unobservedNeeded *int64) {
	if operation.Type == history.Fail {
		return // it never happened
	}
	invoke := &a.ops[operation.Invoke]
	for i, send := range invoke.Sends {
		if send.Partition != tp {
			continue
		}
		input := &logInput{kind: appendValue, value: send.Value}
		offset, polledOnce := pinned[send.Value]
		if !polledOnce {
			offset = history.OffsetUnknown
		}
		if operation.Type == history.OK {
			completion := &a.ops[operation.Complete]
			if acknowledged := completion.Sends[i].Offset; acknowledged != history.OffsetUnknown {
				offset = acknowledged
			}
			s.addOperation(operation.Process, invoke.Time, completion.Time, input, offset, completion.Index)
			continue
		}
		// Unknown outcome: it may take effect at any moment after its
		// invoke, or never.
		op := operation.Invoke
		if operation.Complete != history.NoCompletion {
			op = operation.Complete
		}
		if !a.polled(send.Value) {
			// Unobserved: it only makes one more unplaced append available,
			// and the sooner the better, so it takes effect the instant it
			// is invoked.
			if *unobservedNeeded > 0 {
				*unobservedNeeded--
				input.kind = appendUnobserved
				s.addOperation(operation.Process, invoke.Time, invoke.Time, input, history.OffsetUnknown, op)
			}
			continue
		}
		// Polled once (pinned), or at several offsets: a duplicate,
		// reported as such, free to land anywhere here.
		s.addOperation(operation.Process, invoke.Time, returnTimeUnknown, input, offset, op)
	}
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
				&logInput{kind: readRecords, records: descending(poll.Records)}, int64(0), completion.Index)
		case poll.From != history.OffsetUnknown:
			s.addOperation(operation.Process, invoke.Time, completion.Time,
				&logInput{kind: readNothing, from: poll.From}, int64(0), completion.Index)
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
