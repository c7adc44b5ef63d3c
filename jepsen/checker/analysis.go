package checker

import (
	"cmp"
	"slices"
	"strings"

	"sluice/jepsen/history"
)

// analysis indexes a validated history once, for every checker: who sent
// each value, and every (partition, offset, value) observation, whether
// from a send acknowledgement or a polled record.
type analysis struct {
	ops        []history.Op
	operations []history.Operation
	options    Options

	lossPermitted map[history.TopicPartition]bool
	// lossySenders are Options.LossySenders; lossyPartitions the
	// partitions they sent to, where the consequences of loss are
	// permitted too.
	lossySenders    map[int]bool
	lossyPartitions map[history.TopicPartition]bool
	// logStart is, per partition, the offset below which retention
	// deleted every record (Options.Deleted); zero elsewhere.
	logStart map[history.TopicPartition]int64

	// partitions is every partition a send or poll names, sorted.
	partitions []history.TopicPartition
	logs       map[history.TopicPartition]*partitionLog

	// sends is every sent value, in invoke order. Values are unique
	// (history.Operations checks it).
	sends []sentValue

	// polled is every value an ok poll received. Which polls did is
	// asked only for a finding, and found then (pollsOf): a list per
	// value cost an allocation per record polled.
	polled map[string]bool

	// byProcess is opsByProcess's answer, computed on first use: two
	// checks walk it, and grouping every operation costs a sort.
	byProcess [][]history.Operation
}

// sentValue is one value of one send operation.
type sentValue struct {
	value     string
	partition history.TopicPartition
	operation history.Operation
	// offset is the acknowledged offset: known only for an ok send whose
	// client was told.
	offset int64
}

// observation is one sighting of a value at an offset: an ok send's
// acknowledgement or a polled record.
type observation struct {
	offset int64
	value  string
	op     int // the completion that carried it
	polled bool
}

// partitionLog is what the history shows of one partition's log.
type partitionLog struct {
	// observations are sorted by offset, then value, then op.
	observations []observation
	// knownOffsets are the distinct offsets known to hold a record,
	// ascending.
	knownOffsets []int64
	// maxPolledOffset is the highest offset any poll received
	// (history.OffsetUnknown if none), first received by maxPolledOp.
	maxPolledOffset int64
	maxPolledOp     int
	// operations are the positions in analysis.operations of the sends
	// to this partition and the ok polls of it, in invoke order, each
	// once: the log's linearizability search walks these instead of the
	// whole history once per partition.
	operations []int
}

// newAnalysis validates ops and indexes them.
func newAnalysis(ops []history.Op, options Options) (*analysis, error) {
	if err := options.validate(); err != nil {
		return nil, err
	}
	operations, err := history.Operations(ops)
	if err != nil {
		return nil, err
	}
	a := &analysis{
		ops:             ops,
		operations:      operations,
		options:         options,
		lossPermitted:   map[history.TopicPartition]bool{},
		lossySenders:    map[int]bool{},
		lossyPartitions: map[history.TopicPartition]bool{},
		logStart:        map[history.TopicPartition]int64{},
		logs:            map[history.TopicPartition]*partitionLog{},
		polled:          map[string]bool{},
	}
	for _, tp := range options.LossPermitted {
		a.lossPermitted[tp] = true
	}
	for _, process := range options.LossySenders {
		a.lossySenders[process] = true
	}
	for _, d := range options.Deleted {
		a.logStart[d.Partition] = max(a.logStart[d.Partition], d.Offset)
	}
	for at, operation := range operations {
		switch operation.F {
		case history.FuncSend:
			a.addSend(at, operation)
		case history.FuncPoll:
			if operation.Type == history.OK {
				a.addPoll(at, &ops[operation.Complete])
			}
		}
	}
	for _, tp := range a.partitions {
		a.logs[tp].finish()
	}
	return a, nil
}

// addSend indexes the send at position at of a.operations.
func (a *analysis) addSend(at int, operation history.Operation) {
	invoke := &a.ops[operation.Invoke]
	for i, send := range invoke.Sends {
		if a.lossySenders[operation.Process] {
			a.lossyPartitions[send.Partition] = true
		}
		sent := sentValue{value: send.Value, partition: send.Partition, operation: operation, offset: history.OffsetUnknown}
		log := a.log(send.Partition)
		log.touchedBy(at)
		if operation.Type == history.OK {
			sent.offset = a.ops[operation.Complete].Sends[i].Offset
			if sent.offset != history.OffsetUnknown {
				log.observations = append(log.observations,
					observation{offset: sent.offset, value: send.Value, op: operation.Complete})
			}
		}
		a.sends = append(a.sends, sent)
	}
}

// addPoll indexes the ok poll at position at of a.operations, which
// completed with completion.
func (a *analysis) addPoll(at int, completion *history.Op) {
	for _, poll := range completion.Polls {
		log := a.log(poll.Partition)
		log.touchedBy(at)
		for _, record := range poll.Records {
			log.observations = append(log.observations,
				observation{offset: record.Offset, value: record.Value, op: completion.Index, polled: true})
			if record.Offset > log.maxPolledOffset {
				log.maxPolledOffset = record.Offset
				log.maxPolledOp = completion.Index
			}
			a.polled[record.Value] = true
		}
	}
}

// log returns the partition's log, creating it on first mention.
func (a *analysis) log(tp history.TopicPartition) *partitionLog {
	log, ok := a.logs[tp]
	if !ok {
		log = &partitionLog{maxPolledOffset: history.OffsetUnknown}
		a.logs[tp] = log
		at, found := slices.BinarySearchFunc(a.partitions, tp, history.TopicPartition.Compare)
		if found {
			panic("checker: partition listed without a log: " + tp.String())
		}
		a.partitions = slices.Insert(a.partitions, at, tp)
	}
	return log
}

// touchedBy notes that the operation at position at of
// analysis.operations names this partition. Operations are indexed in
// order, so a repeat can only be the last one noted.
func (l *partitionLog) touchedBy(at int) {
	if n := len(l.operations); n == 0 || l.operations[n-1] != at {
		l.operations = append(l.operations, at)
	}
}

func (l *partitionLog) finish() {
	slices.SortFunc(l.observations, func(x, y observation) int {
		if x.offset != y.offset { // most comparisons end here, before comparing strings
			return cmp.Compare(x.offset, y.offset)
		}
		return cmp.Or(strings.Compare(x.value, y.value), cmp.Compare(x.op, y.op))
	})
	l.knownOffsets = make([]int64, 0, len(l.observations)) // an offset per observation at most
	for _, seen := range l.observations {
		if n := len(l.knownOffsets); n == 0 || l.knownOffsets[n-1] != seen.offset {
			l.knownOffsets = append(l.knownOffsets, seen.offset)
		}
	}
}

// unknownBelowHighest counts the offsets below the highest known one that
// are not known to hold a record.
func (l *partitionLog) unknownBelowHighest() int64 {
	n := len(l.knownOffsets)
	if n == 0 {
		return 0
	}
	return l.knownOffsets[n-1] + 1 - int64(n)
}

// unknownBelow counts the offsets below offset not known to hold a
// record.
func (l *partitionLog) unknownBelow(offset int64) int64 {
	known, _ := slices.BinarySearch(l.knownOffsets, offset)
	return max(0, offset-int64(known))
}

// knownBetween returns the lowest offset strictly between low and high
// known to hold a record, if there is one.
func (l *partitionLog) knownBetween(low, high int64) (int64, bool) {
	at, _ := slices.BinarySearch(l.knownOffsets, low+1)
	if at < len(l.knownOffsets) && l.knownOffsets[at] < high {
		return l.knownOffsets[at], true
	}
	return 0, false
}

// skipStatus is the status of a read that passed over known offsets
// (low, high) exclusive: permitted when every one of them lies below the
// partition's log start (retention deleted them), a failure otherwise.
func (a *analysis) skipStatus(tp history.TopicPartition, low, high int64) Status {
	if _, known := a.logs[tp].knownBetween(max(low, a.logStart[tp]-1), high); known {
		return Failure
	}
	return Permitted
}

// deleted reports whether retention deleted offset of tp: it lies below
// the partition's log start.
func (a *analysis) deleted(tp history.TopicPartition, offset int64) bool {
	return offset != history.OffsetUnknown && offset < a.logStart[tp]
}

// status is a finding's status in a partition: permitted where the options
// allow loss and the anomaly is what loss looks like, a failure otherwise.
// (A value that was lost is judged by lostStatus, which asks who sent it.)
func (a *analysis) status(anomaly Anomaly, tp history.TopicPartition) Status {
	if anomaly.lossConsequence() && (a.lossPermitted[tp] || a.lossyPartitions[tp]) {
		return Permitted
	}
	return Failure
}

// wasPolled reports whether any ok poll received value.
func (a *analysis) wasPolled(value string) bool { return a.polled[value] }

// pollsOf lists the ok polls that received value, as completion indexes,
// in the order of their invokes.
func (a *analysis) pollsOf(value string) []int {
	var readers []int
	for _, operation := range a.operations {
		if operation.F != history.FuncPoll || operation.Type != history.OK {
			continue
		}
		completion := &a.ops[operation.Complete]
		for _, poll := range completion.Polls {
			for _, record := range poll.Records {
				if record.Value == value && (len(readers) == 0 || readers[len(readers)-1] != completion.Index) {
					readers = append(readers, completion.Index)
				}
			}
		}
	}
	return readers
}

// opsByProcess groups operations by process, in invoke order within each,
// processes ascending: each process's operations are sequential, so this
// is also their order in time. Callers must not modify the groups.
func (a *analysis) opsByProcess() [][]history.Operation {
	if a.byProcess != nil || len(a.operations) == 0 {
		return a.byProcess
	}
	processes := make([]int, 0, len(a.operations))
	for _, operation := range a.operations {
		processes = append(processes, operation.Process)
	}
	slices.Sort(processes)
	// Every process's run of the sorted list is its count of operations:
	// the groups share one array, each capped at its own end, rather
	// than each growing on its own.
	all := make([]history.Operation, len(a.operations))
	groups := make([][]history.Operation, 0, len(processes))
	for start := 0; start < len(processes); {
		end := start + 1
		for end < len(processes) && processes[end] == processes[start] {
			end++
		}
		groups = append(groups, all[start:start:end])
		start = end
	}
	processes = slices.Compact(processes)
	for _, operation := range a.operations {
		at, _ := slices.BinarySearch(processes, operation.Process)
		groups[at] = append(groups[at], operation)
	}
	a.byProcess = groups
	return groups
}
