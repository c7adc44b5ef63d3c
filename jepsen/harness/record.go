package harness

import (
	"sync"
	"time"

	"sluice/jepsen/history"
)

// historyLog is the run's history: a history.Recorder behind a mutex, so
// every client goroutine can record, stamped with wall-clock nanoseconds
// since the run began (from the monotonic clock, so never backwards).
type historyLog struct {
	mutex       sync.Mutex
	recorder    *history.Recorder
	start       time.Time
	nextProcess int
}

func newHistoryLog(start time.Time) *historyLog {
	h := &historyLog{start: start}
	h.recorder = history.NewRecorder(func() int64 { return int64(time.Since(h.start)) })
	return h
}

// newProcess hands out a process number never used before.
func (h *historyLog) newProcess() int {
	h.mutex.Lock()
	defer h.mutex.Unlock()
	h.nextProcess++
	return h.nextProcess - 1
}

// operation is one running operation; complete it with ok, fail or info.
type operation struct {
	log     *historyLog
	pending *history.Pending
}

// invoke records the start of an operation. It fails only when the
// history is full or the client broke the process discipline; either is
// a bug in the harness or the end of what a run may record.
func (h *historyLog) invoke(process int, f history.Func, payload history.Payload) (*operation, error) {
	h.mutex.Lock()
	defer h.mutex.Unlock()
	pending, err := h.recorder.Invoke(process, f, payload)
	if err != nil {
		return nil, err
	}
	return &operation{log: h, pending: pending}, nil
}

func (o *operation) ok(results history.Payload) {
	o.log.mutex.Lock()
	defer o.log.mutex.Unlock()
	o.pending.OK(results)
}

func (o *operation) fail(reason string) {
	o.log.mutex.Lock()
	defer o.log.mutex.Unlock()
	o.pending.Fail(reason)
}

func (o *operation) info(reason string) {
	o.log.mutex.Lock()
	defer o.log.mutex.Unlock()
	o.pending.Info(reason)
}

// invocation is the invoke op as recorded.
func (o *operation) invocation() history.Op {
	o.log.mutex.Lock()
	defer o.log.mutex.Unlock()
	return o.pending.Invocation()
}

// ops is a copy of the history so far.
func (h *historyLog) ops() []history.Op {
	h.mutex.Lock()
	defer h.mutex.Unlock()
	return h.recorder.History()
}

// since is the run's clock: time since the start.
func (h *historyLog) since() time.Duration { return time.Since(h.start) }
