package simnet

import (
	"fmt"

	"sluice/sim/kernel"
)

// segmentKind says what a segment carries: a frame, or one of the control
// segments that open and end a connection.
type segmentKind uint8

const (
	segmentData   segmentKind = iota // a frame for the receiver's handler
	segmentSyn                       // the dialer asks to connect
	segmentSynAck                    // the listener accepted
	segmentFin                       // the sender closed after sending everything before it
	segmentReset                     // the sender's process crashed
)

func (k segmentKind) String() string {
	switch k {
	case segmentData:
		return "frame"
	case segmentSyn:
		return "SYN"
	case segmentSynAck:
		return "SYN-ACK"
	case segmentFin:
		return "FIN"
	case segmentReset:
		return "RST"
	}
	return fmt.Sprintf("segment(%d)", uint8(k))
}

// deliveryLabel names a segment's delivery event in the trace.
func (k segmentKind) deliveryLabel() string {
	switch k {
	case segmentData:
		return "net.deliver"
	case segmentSyn:
		return "net.syn"
	case segmentSynAck:
		return "net.syn-ack"
	case segmentFin:
		return "net.fin"
	case segmentReset:
		return "net.rst"
	}
	panic(fmt.Sprintf("simnet: no label for %v", k))
}

// segment is one thing in flight on a direction.
type segment struct {
	kind      segmentKind
	frame     []byte // segmentData only
	deliverAt int64  // set when launched
}

// direction carries segments from one end of a connection to the other, in
// order. Segments are launched (given a delivery time) in order; exactly the
// launched head has a kernel event pending, and delivering it schedules the
// next, so no segment overtakes another whatever order the kernel gives to
// events due at the same time.
//
// Invariants: queue[:launched] are launched and queue[launched:] are not;
// launched is 0 while stalled; delivery is set exactly when launched >
// 0; dataBytes is the sum of the queued frames' lengths.
type direction struct {
	connection *connection
	sender     *end
	receiver   *end

	// queue is the live part of array: segments slide off its front as
	// they are delivered, and it starts again at the front of array once
	// empty (see makeRoom). array begins as queueInline: a direction
	// seldom holds more than two segments at once, so most never
	// allocate for them.
	queue       []segment
	array       []segment
	queueInline [2]segment

	launched  int
	dataBytes int

	// lastDeliverAt is the delivery time of the latest launched segment;
	// no later segment may arrive before it.
	lastDeliverAt int64

	// held keeps data on the dialer's side until the SYN-ACK arrives; the
	// SYN itself goes at once.
	held bool

	// stalled is set while the link from sender to receiver is cut.
	stalled bool

	// receiverGone is set when the receiver closed or crashed: frames sent
	// this way are lost on arrival, so they are dropped at once.
	receiverGone bool

	// delivery is the head's delivery event, whose action is the
	// direction itself (see Run): every delivery schedules one, and a
	// closure or a method value would be an allocation each time, or
	// one per direction made. A kernel.Handle, so the kernel reuses the
	// event once it has run: the zero Handle while none is pending.
	delivery   kernel.Handle
	stallTimer kernel.Handle // the StallBreakAfter timer, while one runs
}

// init makes d, a zero direction, the one carrying segments from sender to
// receiver on c.
func (d *direction) init(c *connection, sender, receiver *end) {
	d.connection, d.sender, d.receiver = c, sender, receiver
	d.array = d.queueInline[:]
	d.queue = d.array[:0]
}

// makeRoom makes room for one more segment behind the queue, which reaches
// the end of its array: it moves the queue to the front of the array when
// that frees at least half of it, and to an array twice the queue's length
// otherwise, so a segment is moved a bounded number of times on average.
func (d *direction) makeRoom() {
	live := len(d.queue)
	if 2*live <= len(d.array) {
		copy(d.array, d.queue)
		clear(d.array[live:]) // the segments' old places: let their frames go
		d.queue = d.array[:live]
		return
	}
	array := make([]segment, 2*live)
	copy(array, d.queue)
	clear(d.queue)
	d.array = array
	d.queue = array[:live]
}

// enqueue adds a segment behind everything queued and launches it if the
// direction is moving.
func (d *direction) enqueue(s segment) {
	if s.kind == segmentData {
		d.dataBytes += len(s.frame)
	}
	if len(d.queue) == cap(d.queue) {
		d.makeRoom()
	}
	d.queue = append(d.queue, s)
	if d.stalled {
		d.armStallTimer()
		return
	}
	d.launch()
}

// launch gives every unlaunched segment that may go its delivery time, in
// order: the time it leaves the sender's egress link (bandwidth), plus a
// latency, but never before the segment ahead of it.
func (d *direction) launch() {
	if d.stalled {
		return
	}
	n := d.connection.network
	for d.launched < len(d.queue) {
		s := &d.queue[d.launched]
		if d.held && s.kind != segmentSyn {
			break
		}
		arrival := d.departure(len(s.frame)) + n.latencyBetween(d.sender.endpoint.host, d.receiver.endpoint.host)
		s.deliverAt = max(d.lastDeliverAt, arrival)
		d.lastDeliverAt = s.deliverAt
		d.launched++
	}
	d.scheduleHead()
}

// departure returns when a segment of size bytes, launched now, has left the
// sender's host, and keeps the host's egress link busy until then.
func (d *direction) departure(size int) int64 {
	n := d.connection.network
	now := n.now()
	bandwidth := n.faults.BandwidthBytesPerSecond
	if bandwidth <= 0 {
		return now
	}
	host := d.sender.endpoint
	start := max(now, host.egressFreeAt)
	// Rounded up, so a non-empty frame always takes some time.
	transmission := (int64(size)*nanosecondsPerSecond + bandwidth - 1) / bandwidth
	host.egressFreeAt = start + transmission
	return host.egressFreeAt
}

// scheduleHead schedules the delivery of the head if it is launched and not
// already scheduled. The event belongs to the receiver's process.
func (d *direction) scheduleHead() {
	if d.delivery != (kernel.Handle{}) || d.launched == 0 {
		return
	}
	head := d.queue[0]
	if d.heldForPausedReceiver(head) {
		return
	}
	n := d.connection.network
	d.delivery = n.kernel.ScheduleHandle(head.deliverAt-n.now(), d.receiver.endpoint.owner, head.kind.deliveryLabel(), d)
}

// Run is the head's delivery event: d is its kernel.Action.
func (d *direction) Run() { d.deliverHead() }

// deliverHead is the delivery event: it takes the head off the queue,
// schedules the next one, then acts on the head.
func (d *direction) deliverHead() {
	n := d.connection.network
	if d.launched == 0 || d.stalled {
		panic(fmt.Sprintf("simnet: connection %d delivered on a direction with nothing launched", d.connection.number))
	}
	if n.isCut(d.sender.endpoint.host, d.receiver.endpoint.host) {
		panic(fmt.Sprintf("simnet: connection %d delivered across the cut link %s->%s", d.connection.number, d.sender.endpoint.host, d.receiver.endpoint.host))
	}
	d.delivery = kernel.Handle{}
	head := d.queue[0]
	if d.heldForPausedReceiver(head) {
		return // ResumeReceiving schedules it again
	}
	d.queue[0] = segment{} // let the frame go once delivered
	if len(d.queue) == 1 {
		// Emptied: start again at the front of the array.
		d.queue = d.array[:0]
	} else {
		d.queue = d.queue[1:]
	}
	d.launched--
	if head.kind == segmentData {
		d.dataBytes -= len(head.frame)
	}
	d.scheduleHead()
	d.connection.receive(d, head)
}

// heldForPausedReceiver reports whether s must wait because its receiver
// paused receiving: frames wait, and so does a FIN, which must not overtake
// them.
func (d *direction) heldForPausedReceiver(s segment) bool {
	return d.receiver.paused && (s.kind == segmentData || s.kind == segmentFin)
}

// release lets the dialer's data go once the handshake is complete.
func (d *direction) release() {
	d.held = false
	d.launch()
}

// stall stops the direction because its link was cut: the pending delivery
// is cancelled and every queued segment waits, unlaunched, for the heal.
func (d *direction) stall() {
	if d.stalled {
		return
	}
	n := d.connection.network
	n.stats.DirectionsStalled++
	d.stalled = true
	d.cancelHead()
	d.launched = 0
	d.lastDeliverAt = n.now()
	d.armStallTimer()
}

// resume restarts a stalled direction whose link has healed: its segments
// are launched again from now, in order, as TCP retransmits them.
func (d *direction) resume() {
	if !d.stalled {
		return
	}
	d.stalled = false
	d.disarmStallTimer()
	d.launch()
}

// armStallTimer starts the StallBreakAfter clock when a segment first waits
// behind a cut. During the handshake ConnectTimeout governs instead, so the
// clock starts, if still needed, when the SYN-ACK arrives.
func (d *direction) armStallTimer() {
	n := d.connection.network
	after := int64(n.faults.StallBreakAfter)
	if !d.stalled || len(d.queue) == 0 || d.stallTimer != (kernel.Handle{}) || after <= 0 || d.connection.connectTimer != (kernel.Handle{}) {
		return
	}
	d.stallTimer = n.kernel.ScheduleHandle(after, nil, "net.stall-timeout", kernel.Func(func() {
		d.stallTimer = kernel.Handle{}
		if d.connection.breakConnection(ErrStallTimeout, false) {
			n.stats.StallBreaks++
		}
	}))
}

func (d *direction) disarmStallTimer() {
	d.stallTimer.Stop()
	d.stallTimer = kernel.Handle{}
}

func (d *direction) cancelHead() {
	d.delivery.Stop()
	d.delivery = kernel.Handle{}
}

// drop loses everything queued, as a break or a crash does.
func (d *direction) drop() {
	d.cancelHead()
	d.disarmStallTimer()
	for _, s := range d.queue {
		if s.kind == segmentData {
			d.connection.network.stats.FramesDropped++
		}
	}
	clear(d.queue)
	d.queue = d.array[:0]
	d.launched = 0
	d.dataBytes = 0
}

// dropData loses the queued frames but keeps control segments: when the
// receiver closes, its kernel still completes a handshake in progress.
func (d *direction) dropData() {
	d.cancelHead()
	kept := d.queue[:0]
	launched := 0
	for i, s := range d.queue {
		if s.kind == segmentData {
			d.connection.network.stats.FramesDropped++
			continue
		}
		if i < d.launched {
			launched++
		}
		kept = append(kept, s)
	}
	clear(d.queue[len(kept):])
	d.queue = kept
	d.launched = launched
	d.dataBytes = 0
	if len(d.queue) == 0 {
		d.disarmStallTimer()
	}
	d.scheduleHead()
}
