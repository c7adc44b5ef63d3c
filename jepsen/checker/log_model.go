package checker

import (
	"fmt"
	"slices"
	"strings"

	"github.com/anishathalye/porcupine"

	"sluice/jepsen/history"
)

// describedRecordsMax bounds how many records an operation's description
// lists in porcupine's visualization.
const describedRecordsMax = 6

// logOperationKind is what one operation does to a partition's log.
type logOperationKind uint8

const (
	// appendValue appends value at offset, or wherever when offset is
	// history.OffsetUnknown.
	appendValue logOperationKind = iota + 1
	// appendUnobserved is a send of unknown outcome whose value nobody
	// observed: it may have appended at any moment after its invoke, or
	// never, and no read can tell which value it was. See logModel for
	// how the model keeps it cheap.
	appendUnobserved
	// readRecords reads records at their offsets: each offset must hold
	// its value.
	readRecords
	// readNothing reads that the log holds nothing at or past from.
	readNothing
	// appendDeletedCopy is a copy of a send's value that a retry may
	// have written besides the one the send is known by, in the part of
	// the log retention has since deleted, unseen (see
	// logSearchWithDeletedCopies). Like appendUnobserved it is only
	// counted, and fills gaps below the deleted offset.
	appendDeletedCopy
)

// logInput is one operation on the log model. It carries all the
// operation says: the operations' outputs are nil.
type logInput struct {
	kind  logOperationKind
	value string
	// more, for appendValue, are values appended right after value, in
	// the same step: the rest of a batch.
	more []string
	// offset, for appendValue, is the offset it must land at, or
	// history.OffsetUnknown when any offset will do.
	offset int64
	// records, for readRecords, sorted by descending offset so a read walks
	// the log backwards once.
	records []history.Record
	from    int64
	// op is the history index of the op that names the operation.
	op int
}

func (input *logInput) historyOp() int { return input.op }

// eager: unobserved appends and deleted copies are only counted, and
// more of either never makes a later step fail (see logModel), so the
// search need not try them anywhere but as early as they may go.
func (input *logInput) eager() bool {
	return input.kind == appendUnobserved || input.kind == appendDeletedCopy
}

// partitionState is the log model's state: the log, and how many
// unobserved appends have been invoked whose value is not yet in it.
type partitionState struct {
	log *logState
	// unplaced counts appendUnobserved operations linearized so far whose
	// value has not been placed in the log.
	unplaced int
	// deletedCopies counts appendDeletedCopy operations linearized so far
	// and not yet placed; they may only fill offsets below deletedBelow.
	deletedCopies int
	deletedBelow  int64
}

// logModel is the sequential specification of a partition: a log that
// sends append to and polls read from.
//
// Unobserved appends (sends of unknown outcome whose value no poll ever
// received) get special treatment, because a run with many timeouts has
// many of them and porcupine would otherwise try each at every point of
// the history. They are interchangeable: no read can tell them apart. So
// when one is linearized the model only counts it (unplaced), and an
// append that must land at offset o when the log is shorter fills the gap
// with that many unplaced ones, as if they had taken effect just before
// it. That is always a valid moment for them (after their invoke, since
// they were linearized earlier, and their outcome is unknown), and any
// linearization that places them elsewhere can be rearranged into this
// one without changing what any read sees: a read cannot observe them,
// and a read that the log ends at p only gets easier when the log grows
// later. Unplaced ones left over at the end never happened, or landed
// past everything anyone read.
//
// More unplaced appends never make a step fail, so counting one as early
// as possible is never worse: logSearch gives each the instant of its
// invoke, which spares porcupine from trying it anywhere else.
//
// Deleted copies (appendDeletedCopy) are counted the same way and fill a
// gap before unplaced appends do, where the gap lies below deletedBelow:
// they can fill nothing else, so spending them first is never worse.
// deletedBelow, the offset below which retention deleted the records, is
// zero, and no copies are offered, but in logSearchWithDeletedCopies.
func logModel(deletedBelow int64) porcupine.Model {
	model := logModelSteps
	model.Init = func() any { return partitionState{log: emptyLog(), deletedBelow: deletedBelow} }
	return model
}

// logModelSteps is the log model but for its initial state.
var logModelSteps = porcupine.Model{
	// A step that changes nothing, or fails (porcupine drops the state
	// of a failed step), returns the state it was given: boxing a copy
	// in an interface would allocate, on the search's hottest path.
	Step: func(state, input, output any) (bool, any) {
		current := state.(partitionState)
		operation := input.(*logInput)
		switch operation.kind {
		case appendValue:
			next, ok := current.appendAt(operation.value, operation.offset)
			if !ok {
				return false, state
			}
			for _, value := range operation.more {
				next.log = next.log.append(value)
			}
			return true, next
		case appendUnobserved:
			current.unplaced++
			return true, current
		case appendDeletedCopy:
			current.deletedCopies++
			return true, current
		case readRecords:
			return current.log.holds(operation.records), state
		case readNothing:
			return current.log.length <= operation.from, state
		}
		panic(fmt.Sprintf("checker: unknown log operation kind %d", operation.kind))
	},
	Equal: func(x, y any) bool {
		a, b := x.(partitionState), y.(partitionState)
		return a.unplaced == b.unplaced && a.deletedCopies == b.deletedCopies && a.log.equal(b.log)
	},
	Hash: func(state any) uint64 {
		s := state.(partitionState)
		return s.log.hash ^ uint64(s.unplaced)*0x9e3779b97f4a7c15 ^ uint64(s.deletedCopies)*0xc2b2ae3d27d4eb4f
	},
	DescribeOperation: func(input, output any) string {
		operation := input.(*logInput)
		switch operation.kind {
		case appendValue:
			values := fmt.Sprintf("%q", operation.value)
			if len(operation.more) > 0 {
				values = fmt.Sprintf("%q and %d more of its batch (%q)", operation.value, len(operation.more), operation.more[len(operation.more)-1])
			}
			if operation.offset != history.OffsetUnknown {
				return fmt.Sprintf("append %s at %d", values, operation.offset)
			}
			return "append " + values
		case appendUnobserved:
			return fmt.Sprintf("make %q, never observed, available to fill a gap", operation.value)
		case appendDeletedCopy:
			return fmt.Sprintf("make a copy of %q, available to fill a gap that retention deleted", operation.value)
		case readRecords:
			return "read " + describeRecords(operation.records)
		default:
			return fmt.Sprintf("read nothing from %d", operation.from)
		}
	},
	DescribeState: func(state any) string {
		s := state.(partitionState)
		var tail []string
		for version := s.log; version.length > 0 && len(tail) < describedRecordsMax; version = version.previous {
			if version.unobserved {
				tail = append(tail, fmt.Sprintf("%d:(unobserved)", version.length-1))
			} else {
				tail = append(tail, fmt.Sprintf("%d:%q", version.length-1, version.value))
			}
		}
		slices.Reverse(tail)
		description := fmt.Sprintf("length %d, ending %s", s.log.length, strings.Join(tail, " "))
		if s.unplaced > 0 {
			description += fmt.Sprintf("; %d unobserved appends unplaced", s.unplaced)
		}
		if s.deletedCopies > 0 {
			description += fmt.Sprintf("; %d deleted copies unplaced", s.deletedCopies)
		}
		return description
	},
	DescribeOperationMetadata: describeMetadata,
}

// appendAt appends value at offset (history.OffsetUnknown: wherever the
// log ends), first filling any gap with deleted copies, as far as it lies
// below deletedBelow, and unplaced unobserved appends.
func (s partitionState) appendAt(value string, offset int64) (partitionState, bool) {
	if offset != history.OffsetUnknown {
		gap := offset - s.log.length
		copies := min(int64(s.deletedCopies), max(0, min(offset, s.deletedBelow)-s.log.length))
		if gap < 0 || gap-copies > int64(s.unplaced) {
			return s, false
		}
		for range gap {
			s.log = s.log.appendUnobserved()
		}
		s.deletedCopies -= int(copies)
		s.unplaced -= int(gap - copies)
	}
	s.log = s.log.append(value)
	return s, true
}

// holds reports whether the log holds every record, given in descending
// offset order, at its offset.
func (l *logState) holds(descending []history.Record) bool {
	version := l
	for _, record := range descending {
		if record.Offset >= l.length {
			return false
		}
		version = version.ancestor(record.Offset + 1)
		if version.unobserved || version.value != record.Value {
			return false
		}
	}
	return true
}

// describeRecords lists records, given in descending offset order, in
// ascending order: `3:"a" 4:"b"`, eliding the middle of long lists.
func describeRecords(descending []history.Record) string {
	if len(descending) == 0 {
		return "nothing"
	}
	words := make([]string, len(descending))
	for i, record := range descending {
		words[len(descending)-1-i] = fmt.Sprintf("%d:%q", record.Offset, record.Value)
	}
	if len(words) > describedRecordsMax {
		half := describedRecordsMax / 2
		elided := fmt.Sprintf("...(%d more)...", len(words)-2*half)
		words = slices.Concat(words[:half], []string{elided}, words[len(words)-half:])
	}
	return strings.Join(words, " ")
}
