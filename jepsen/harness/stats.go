package harness

import (
	"fmt"

	"sluice/jepsen/history"
)

// HistoryStats counts what a history holds, for the verdict and the
// progress lines.
type HistoryStats struct {
	Ops                                int
	SendsOK, SendsUnknown, SendsFailed int
	Polls, RecordsPolled               int
	CommitsOK, CommitsOther            int
	Assignments, CommittedReads        int
	// Drained says the final read reached every partition's end.
	Drained bool
}

func (s HistoryStats) String() string {
	return fmt.Sprintf("%d ops: sends ok=%d unknown=%d failed=%d; polls=%d (records %d); commits ok=%d other=%d; group assignments=%d; committed-offset reads=%d; final read complete=%t",
		s.Ops, s.SendsOK, s.SendsUnknown, s.SendsFailed, s.Polls, s.RecordsPolled, s.CommitsOK, s.CommitsOther,
		s.Assignments, s.CommittedReads, s.Drained)
}

func countHistory(ops []history.Op, drained bool) HistoryStats {
	s := HistoryStats{Ops: len(ops), Drained: drained}
	for _, op := range ops {
		if op.Type == history.Invoke {
			continue
		}
		switch op.F {
		case history.FuncSend:
			switch op.Type {
			case history.OK:
				s.SendsOK++
			case history.Info:
				s.SendsUnknown++
			default:
				s.SendsFailed++
			}
		case history.FuncPoll:
			s.Polls++
			for _, poll := range op.Polls {
				s.RecordsPolled += len(poll.Records)
			}
		case history.FuncCommit:
			if op.Type == history.OK {
				s.CommitsOK++
			} else {
				s.CommitsOther++
			}
		case history.FuncSubscribe:
			s.Assignments++
		case history.FuncFetchCommitted:
			s.CommittedReads++
		}
	}
	return s
}
