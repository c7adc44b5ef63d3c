package quorum

// Catching up. At Open a node delivers only what it knows to be committed:
// a sole voter its whole log, any other node just its newest snapshot. The
// rest of the committed log arrives once the node hears the leader's high
// watermark. A node that acts on the absence of something in its metadata
// (a broker removing partition directories the metadata no longer names)
// must wait until it has caught up: until it has delivered everything up to
// the first high watermark it learned in this process lifetime, as a KRaft
// broker waits for the metadata log before it unfences.

// CaughtUp reports whether this process has delivered every record up to
// the first high watermark it learned (at once, for a sole voter).
func (q *Quorum) CaughtUp() bool { return q.caughtUp }

// OnCaughtUp calls f once this process has caught up (see CaughtUp), on a
// later turn of the loop if it already has.
func (q *Quorum) OnCaughtUp(f func()) {
	if q.caughtUp {
		q.world.Clock.AfterFunc(0, func() {
			if !q.closed {
				f()
			}
		})
		return
	}
	if len(q.caughtUpListeners) >= listenersMax {
		panic("quorum: too many OnCaughtUp functions")
	}
	q.caughtUpListeners = append(q.caughtUpListeners, f)
}

// learnedHighWatermark notes a high watermark heard for the first time in
// this process lifetime: catching up means delivering up to it.
func (q *Quorum) learnedHighWatermark(offset int64) {
	if q.catchUpTarget < 0 {
		q.catchUpTarget = offset
	}
	q.maybeCaughtUp()
}

// maybeCaughtUp tells the OnCaughtUp functions once delivery has reached the
// target.
func (q *Quorum) maybeCaughtUp() {
	if q.caughtUp || q.catchUpTarget < 0 || q.appliedEnd < q.catchUpTarget || q.closed {
		return
	}
	q.caughtUp = true
	q.logger.Info("caught up", "offset", q.appliedEnd)
	listeners := q.caughtUpListeners
	q.caughtUpListeners = nil
	for _, f := range listeners {
		f()
	}
}
