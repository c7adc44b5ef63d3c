package checker

import (
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/anishathalye/porcupine"

	"sluice/jepsen/history"
)

// VisualizeLog checks one partition's log again and writes porcupine's
// HTML visualization of the history and its (partial) linearizations to w:
// the page to open when a report names a nonlinearizable-log.
func VisualizeLog(ops []history.Op, tp history.TopicPartition, options Options, w io.Writer) error {
	a, err := newAnalysis(ops, options)
	if err != nil {
		return err
	}
	if _, ok := a.logs[tp]; !ok {
		return fmt.Errorf("checker: the history never sends to or polls %s", tp)
	}
	return visualize(a.logSearch(tp), w)
}

// VisualizeCommittedOffset is VisualizeLog for one group's committed offset
// of one partition.
func VisualizeCommittedOffset(ops []history.Op, group string, tp history.TopicPartition, options Options, w io.Writer) error {
	a, err := newAnalysis(ops, options)
	if err != nil {
		return err
	}
	key := groupPartition{group: group, partition: tp}
	s := a.committedOffsetSearch(key, a.registerOperations()[key])
	if len(s.operations) == 0 {
		return fmt.Errorf("checker: the history never commits or fetches group %q's offset of %s", group, tp)
	}
	return visualize(s, w)
}

// visualizationTimeout is porcupine's budget for the linearizations a
// visualization draws. The verdict never depends on it: run gives that.
const visualizationTimeout = 60 * time.Second

func visualize(s *search, w io.Writer) error {
	for i := range s.operations {
		s.operations[i].Metadata = historyOp(s.operations[i]) // names the op on the page
	}
	result, info := s.runPorcupine(visualizationTimeout) // for its linearization info
	if result == porcupine.Unknown {
		return fmt.Errorf("checker: porcupine ran out of its %s budget; nothing to visualize", visualizationTimeout)
	}
	if err := porcupine.Visualize(s.model, info, w); err != nil {
		return fmt.Errorf("checker: writing the visualization: %w", err)
	}
	return nil
}

// runPorcupine checks the operations with porcupine, with a time budget,
// for the linearization info its visualization draws. Porcupine runs in
// its own goroutines and reads the wall clock for the budget, so no
// verdict comes from it (run's does).
func (s *search) runPorcupine(timeout time.Duration) (porcupine.CheckResult, porcupine.LinearizationInfo) {
	s.numberClients()
	return porcupine.CheckOperationsVerbose(s.model, s.operations, timeout)
}

// numberClients renumbers processes 0, 1, 2... in ascending order, as
// porcupine's visualization wants.
func (s *search) numberClients() {
	var processes []int
	for _, operation := range s.operations {
		processes = append(processes, operation.ClientId)
	}
	slices.Sort(processes)
	processes = slices.Compact(processes)
	for i := range s.operations {
		s.operations[i].ClientId, _ = slices.BinarySearch(processes, s.operations[i].ClientId)
	}
}
