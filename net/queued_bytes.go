package net

import "sync"

// queuedBytes bounds, across every connection of one listener or dialer,
// the bytes of frames read from sockets and not yet handed to the node's
// loop (Kafka's queued.max.request.bytes). Each connection's reader may hold
// a frame of up to FrameBytesMax; without a shared bound, ten thousand
// connections could together allocate ten thousand such frames while the
// loop is busy. A reader that cannot reserve its frame's size waits, and
// stops reading its socket meanwhile, so TCP pushes back on the client.
type queuedBytes struct {
	mutex     sync.Mutex
	wake      *sync.Cond
	available int64
	closed    bool
}

func newQueuedBytes(limit int64) *queuedBytes {
	q := &queuedBytes{available: limit}
	q.wake = sync.NewCond(&q.mutex)
	return q
}

// reserve waits until n bytes are available and takes them. It gives up,
// reporting false, when the budget is closed or stop reports true (the
// connection ended); stop is checked whenever the budget changes and when
// interrupt is called.
func (q *queuedBytes) reserve(n int64, stop func() bool) bool {
	q.mutex.Lock()
	defer q.mutex.Unlock()
	for q.available < n {
		if q.closed || stop() {
			return false
		}
		q.wake.Wait()
	}
	q.available -= n
	return true
}

// release returns n bytes.
func (q *queuedBytes) release(n int64) {
	q.mutex.Lock()
	q.available += n
	q.mutex.Unlock()
	q.wake.Broadcast()
}

// interrupt wakes every waiting reader so it can check whether it should
// stop (its connection ended).
func (q *queuedBytes) interrupt() {
	q.mutex.Lock()
	// Taking the lock orders this broadcast after any reserve that
	// already checked stop and is about to Wait.
	q.mutex.Unlock()
	q.wake.Broadcast()
}

// close makes every waiting and later reserve fail.
func (q *queuedBytes) close() {
	q.mutex.Lock()
	q.closed = true
	q.mutex.Unlock()
	q.wake.Broadcast()
}
