package broker

// The broker's side of liveness, as KRaft's BrokerLifecycleManager runs it
// (KIP-631):
//
//  1. At start the broker registers with the active controller
//     (BrokerRegistration) with a fresh incarnation id, and gets a broker
//     epoch. It retries with a backoff until it succeeds: no controller
//     yet, a controller that just lost its leadership, or
//     DUPLICATE_BROKER_REGISTRATION while the previous process's session
//     runs out.
//  2. It then heartbeats (BrokerHeartbeat) every HeartbeatInterval with
//     the metadata offset it has applied; the controller unfences it once
//     that offset reaches its registration, and fences it if the
//     heartbeats stop. While fenced it heartbeats more often, so that it
//     is unfenced soon after catching up.
//
//     A request waits at most HeartbeatInterval for its answer, and a new
//     quorum leader abandons the request in flight to the old one: the
//     new controller must hear from this broker within its session
//     timeout, and an old leader that is cut off (not crashed) never
//     answers nor breaks the connection.
//  3. Shutdown asks for a controlled shutdown (WantShutdown): the
//     controller moves its leaderships away while it still serves, and
//     answers ShouldShutdown once it leads nothing; the broker then stops.
//     It stops anyway after ControlledShutdownTimeout.
//
// On a node whose controller is the active one, the same requests are
// local calls (forwarding.go). A single node registers, heartbeats and
// unfences itself exactly as in a cluster.

import (
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"sluice/core"
)

// Pacing of the lifecycle's requests.
const (
	// registrationRetryMin and registrationRetryMax bound the backoff
	// between registration attempts, doubling in between.
	registrationRetryMin = 50 * time.Millisecond
	registrationRetryMax = 2 * time.Second
	// fencedHeartbeatInterval is the heartbeat pace while fenced or
	// shutting down, when the next answer changes something.
	fencedHeartbeatInterval = 100 * time.Millisecond
)

// Versions of the lifecycle's requests: what the controller listener
// serves (62_broker_registration.go, 63_broker_heartbeat.go).
const (
	brokerRegistrationVersion = 3
	brokerHeartbeatVersion    = 1
)

type lifecycleState int

const (
	lifecycleIdle lifecycleState = iota
	lifecycleRegistering
	lifecycleRegistered
	lifecycleShuttingDown
	lifecycleStopped
)

// lifecycle registers the broker and keeps its session alive.
type lifecycle struct {
	b           *Broker
	incarnation [16]byte
	state       lifecycleState
	// inFlight is set while a registration or heartbeat awaits its
	// answer: at most one is out at a time. generation counts the
	// requests abandoned; an answer from an older generation is ignored.
	inFlight   bool
	generation uint64
	// next is the timer of the next attempt, which calls nextAttempt
	// (made once: every heartbeat schedules one).
	next        core.Timer
	nextAttempt func()
	backoff     time.Duration
	fenced      bool
	// leaseFrom is when the last heartbeat the controller answered
	// unfenced was sent (monotonic), and leased whether there is one
	// since the last fencing. See holdsLease.
	leaseFrom time.Duration
	leased    bool

	shutdownDone    func()
	shutdownTimeout core.Timer
}

func newLifecycle(b *Broker) *lifecycle {
	l := &lifecycle{b: b, backoff: registrationRetryMin, fenced: true}
	l.nextAttempt = func() {
		l.next = nil
		l.attempt()
	}
	for i := 0; i < len(l.incarnation); i += 8 {
		v := b.w.Entropy.Uint64()
		for j := 0; j < 8; j++ {
			l.incarnation[i+j] = byte(v >> (8 * j))
		}
	}
	return l
}

// start begins registering.
func (l *lifecycle) start() {
	l.state = lifecycleRegistering
	l.attempt()
}

// controllerChanged is called when the quorum leader changes: the request
// in flight to the old one is abandoned, and the next goes at once to the
// new controller.
func (l *lifecycle) controllerChanged() {
	switch l.state {
	case lifecycleRegistering, lifecycleRegistered, lifecycleShuttingDown:
		if l.inFlight {
			l.generation++
			l.inFlight = false
		}
		l.backoff = registrationRetryMin
		l.attempt()
	}
}

// schedule sets the next attempt after d.
func (l *lifecycle) schedule(d time.Duration) {
	if l.next != nil {
		l.next.Stop()
	}
	l.next = l.b.w.Clock.AfterFunc(d, l.nextAttempt)
}

// attempt sends what the state calls for, unless a request is out.
func (l *lifecycle) attempt() {
	if l.inFlight {
		return
	}
	if l.next != nil {
		l.next.Stop()
		l.next = nil
	}
	switch l.state {
	case lifecycleRegistering:
		l.register()
	case lifecycleRegistered, lifecycleShuttingDown:
		l.heartbeat()
	}
}

func (l *lifecycle) register() {
	b := l.b
	req := kmsg.NewPtrBrokerRegistrationRequest()
	req.Version = brokerRegistrationVersion
	req.BrokerID = b.config.NodeID
	req.ClusterID = b.clusterID
	req.IncarnationID = l.incarnation
	req.PreviousBrokerEpoch = -1
	listener := kmsg.NewBrokerRegistrationRequestListener()
	listener.Name = "PLAINTEXT"
	listener.Host = b.config.AdvertisedHost
	listener.Port = uint16(b.config.AdvertisedPort)
	req.Listeners = append(req.Listeners, listener)
	if b.config.Rack != "" {
		req.Rack = &b.config.Rack
	}
	l.inFlight = true
	generation := l.generation
	b.toController(req, b.config.HeartbeatInterval, func(r kmsg.Response, err error) {
		if generation != l.generation {
			return // abandoned for a new controller
		}
		l.inFlight = false
		if l.state != lifecycleRegistering {
			return
		}
		if err == nil && firstErrorCode(r) == 0 {
			resp := r.(*kmsg.BrokerRegistrationResponse)
			l.state = lifecycleRegistered
			l.backoff = registrationRetryMin
			b.brokerEpoch = resp.BrokerEpoch
			b.log.Info("broker registered", "epoch", resp.BrokerEpoch)
			b.requestProducerIDBlock()
			l.attempt() // the first heartbeat, at once
			return
		}
		l.logFailure("registration", r, err)
		l.schedule(l.backoff)
		l.backoff = min(2*l.backoff, registrationRetryMax)
	})
}

func (l *lifecycle) heartbeat() {
	b := l.b
	req := kmsg.NewPtrBrokerHeartbeatRequest()
	req.Version = brokerHeartbeatVersion
	req.BrokerID = b.config.NodeID
	req.BrokerEpoch = b.brokerEpoch
	req.CurrentMetadataOffset = b.image.Offset
	req.WantFence = false
	req.WantShutdown = l.state == lifecycleShuttingDown
	l.inFlight = true
	generation := l.generation
	sentAt := b.w.Clock.Elapsed()
	b.toController(req, b.config.HeartbeatInterval, func(r kmsg.Response, err error) {
		if generation != l.generation {
			return // abandoned for a new controller
		}
		l.inFlight = false
		if l.state != lifecycleRegistered && l.state != lifecycleShuttingDown {
			return
		}
		if err != nil || firstErrorCode(r) != 0 {
			l.logFailure("heartbeat", r, err)
			if err == nil && firstErrorCode(r) == kerr.StaleBrokerEpoch.Code && l.state == lifecycleRegistered {
				// The controller has no registration at this
				// epoch: register again (the same incarnation gets
				// its epoch back if it is still registered).
				l.state = lifecycleRegistering
			}
			l.schedule(fencedHeartbeatInterval)
			return
		}
		resp := r.(*kmsg.BrokerHeartbeatResponse)
		switch {
		case resp.IsFenced:
			l.leased = false
		case resp.IsCaughtUp:
			// Renewed only by a heartbeat sent with the metadata
			// that concerns this broker applied (core/controller,
			// catch_up.go): one whose image still shows a replica a
			// reassignment took away lets its lease run out.
			l.leased = true
			l.leaseFrom = max(l.leaseFrom, sentAt)
		}
		if resp.IsFenced != l.fenced {
			l.fenced = resp.IsFenced
			b.log.Info("broker fencing changed", "fenced", resp.IsFenced, "caught_up", resp.IsCaughtUp)
		}
		switch {
		case l.state == lifecycleShuttingDown && resp.ShouldShutdown:
			l.finishShutdown("the controller moved every leadership away")
		case l.state == lifecycleShuttingDown || resp.IsFenced:
			l.schedule(fencedHeartbeatInterval)
		default:
			l.schedule(b.config.HeartbeatInterval)
		}
	})
}

// leaseSessionFraction is the part of broker.session.timeout.ms a broker
// trusts its last unfenced heartbeat for. The controller fences a broker
// a session timeout after it last received a heartbeat, by its own clock;
// the broker counts from when it sent it, by its clock, so it gives up
// first as long as its clock runs at more than this fraction of the
// controller's. Half allows any two clocks whose rates differ by less than
// a factor of two (the controller's leadership lease allows four,
// config.go): the simulator's drift reaches 0.8 against 1.25, a factor of
// 1.56, under which three quarters outlasted the fencing (scenarios/
// regressions/cluster-nonlinearizable-committed-offset-clock-drift-4.txt).
// It still spans more than two heartbeats at Kafka's defaults (9 s, 2 s).
const (
	leaseSessionFractionNumerator   = 1
	leaseSessionFractionDenominator = 2
)

// holdsLease reports whether the controller cannot have fenced this broker
// yet: it is registered and its last unfenced heartbeat is recent enough.
// A broker cut off from the controller but not from its clients still
// believes it leads its partitions; once its lease runs out it must not
// answer reads that claim to be the latest (OffsetFetch), because the
// controller may already have fenced it and elected another leader, whose
// coordinator takes new commits. Writes need no lease: they commit only
// through the ISR, which the old leader cannot reach or shrink.
func (l *lifecycle) holdsLease() bool {
	if !l.leased || (l.state != lifecycleRegistered && l.state != lifecycleShuttingDown) {
		return false
	}
	if l.b.w.Canaries.On(CanaryReadsPastLease) {
		return true
	}
	numerator, denominator := time.Duration(leaseSessionFractionNumerator), time.Duration(leaseSessionFractionDenominator)
	if l.b.w.Canaries.On(CanaryLeaseOutlastsFencing) {
		numerator, denominator = 3, 4
	}
	return l.b.w.Clock.Elapsed()-l.leaseFrom < l.b.config.SessionTimeout*numerator/denominator
}

// logFailure logs a failed registration or heartbeat; they are retried.
func (l *lifecycle) logFailure(what string, r kmsg.Response, err error) {
	if err != nil {
		l.b.log.Debug(what+" did not reach the controller", "error", err)
		return
	}
	l.b.log.Info(what+" refused", "error", kerr.ErrorForCode(firstErrorCode(r)))
}

// shutdown runs the controlled shutdown and then calls done.
func (l *lifecycle) shutdown(done func()) {
	if l.state != lifecycleRegistered {
		// Never registered (or stopped): nothing leads here.
		l.state = lifecycleStopped
		l.stopTimers()
		done()
		return
	}
	l.state = lifecycleShuttingDown
	l.shutdownDone = done
	l.b.log.Info("controlled shutdown: asking the controller to move this broker's leaderships")
	l.shutdownTimeout = l.b.w.Clock.AfterFunc(l.b.config.ControlledShutdownTimeout, func() {
		l.finishShutdown("the controlled shutdown timed out")
	})
	l.attempt()
}

// finishShutdown ends the controlled shutdown once.
func (l *lifecycle) finishShutdown(why string) {
	if l.state != lifecycleShuttingDown {
		return
	}
	l.state = lifecycleStopped
	l.stopTimers()
	l.b.log.Info("controlled shutdown over: " + why)
	done := l.shutdownDone
	l.shutdownDone = nil
	done()
}

func (l *lifecycle) stopTimers() {
	if l.next != nil {
		l.next.Stop()
		l.next = nil
	}
	if l.shutdownTimeout != nil {
		l.shutdownTimeout.Stop()
	}
}
