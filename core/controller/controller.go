package controller

import (
	"fmt"
	"log/slog"
	"time"

	"sluice/core"
	"sluice/core/metadata"
)

// Proposer commits records: the quorum, from the controller's side.
type Proposer interface {
	// Propose appends records and calls done once they are committed
	// (and applied through Controller.Apply), or with an error.
	Propose(records []metadata.Record, done func(lastOffset int64, err error))
}

// Config holds the controller's settings.
type Config struct {
	// DefaultPartitions is num.partitions, for CreateTopics asking for -1
	// partitions. Zero means Kafka's default, 1.
	DefaultPartitions int32
	// DefaultReplicationFactor is default.replication.factor, for
	// CreateTopics asking for -1. Zero means Kafka's default, 1.
	DefaultReplicationFactor int16
	// TopicDefaults are broker-level overrides of topic config defaults,
	// keyed by topic config name (retention.ms for Kafka's
	// log.retention.ms). CreateTopics answers report them with source
	// STATIC_BROKER_CONFIG, as DescribeConfigs does.
	TopicDefaults map[string]string
	// SessionTimeout is broker.session.timeout.ms: a broker whose
	// heartbeats stop for this long is fenced and loses its leaderships.
	// Zero means Kafka's default, 9 s.
	SessionTimeout time.Duration
	// LeaderImbalanceCheckInterval is leader.imbalance.check.interval.seconds
	// while auto.leader.rebalance.enable holds: how often the active
	// controller moves leaders back to their preferred replicas
	// (leader_rebalance.go). Zero or less: never.
	LeaderImbalanceCheckInterval time.Duration
	// LeadershipLease is how long after proposing records that then
	// committed the controller answers a heartbeat that changes nothing
	// at once; past it, the answer waits for a no-op to commit first
	// (heartbeat.go says why). A node sets it to a quarter of the
	// quorum's FetchTimeout. Zero: always at once (tests of the
	// controller alone).
	LeadershipLease time.Duration
}

// defaultSessionTimeout is Kafka's broker.session.timeout.ms.
const defaultSessionTimeout = 9 * time.Second

// Controller is the metadata state machine.
type Controller struct {
	w   core.World
	log *slog.Logger
	// events is the logger of the lines core.World's Events describes
	// (unclean elections, reassignments completed, leaders rebalanced),
	// made at the first (eventLogger).
	events   *slog.Logger
	config   Config
	proposer Proposer
	image    *metadata.Image
	// confirmedAt is when (Clock.Elapsed) the controller proposed the
	// latest of its proposals that committed, once confirmed: a majority
	// of voters fetched from it after that, which proves it led then.
	confirmedAt time.Duration
	confirmed   bool

	// queue holds the operations waiting their turn; running is set while
	// one is between its start and its finish, draining while runNext's
	// loop is starting operations. started counts the operations
	// started, so that a finish can tell it is its operation's first.
	queue    []operation
	running  bool
	draining bool
	started  uint64

	// The active/inactive switch (activation.go). Only the quorum
	// leader's controller is active; it acts once ready, when everything
	// committed before its term is in its image. term counts activations
	// and deactivations, so that a timer or answer from an earlier term
	// does nothing.
	active bool
	ready  bool
	term   uint64

	// sessions are the brokers' heartbeat sessions (liveness.go), kept
	// by the active controller only and rebuilt whenever it activates.
	sessions map[int32]*session
	// catchUpOffsets is, for each broker, the last record of the
	// metadata log it must have applied before it counts as caught up
	// and may be unfenced: its current registration, its last fencing,
	// or the last change that took a partition's leadership from it,
	// whichever is latest (catch_up.go). Every controller tracks it
	// from Apply, active or not.
	catchUpOffsets map[int32]int64
}

// eventLogger is the controller's logger of the lines core.World's Events
// describes, made at the first.
func (c *Controller) eventLogger() *slog.Logger {
	if c.events == nil {
		c.events = c.w.EventLog().With("role", "controller")
	}
	return c.events
}

// New returns a controller that proposes through p. Its image starts empty
// and follows the committed records given to Apply. It starts inactive:
// the node calls Activate when its quorum elects it leader.
func New(w core.World, config Config, p Proposer) *Controller {
	if config.SessionTimeout <= 0 {
		config.SessionTimeout = defaultSessionTimeout
	}
	return &Controller{
		w: w, log: w.Log.With("role", "controller"), config: config, proposer: p, image: metadata.NewImage(),
		sessions:       map[int32]*session{},
		catchUpOffsets: map[int32]int64{},
	}
}

// Image is the controller's committed view. Callers must not modify it.
func (c *Controller) Image() *metadata.Image { return c.image }

// Apply applies one committed record to the controller's image.
func (c *Controller) Apply(offset int64, r metadata.Record) error {
	concerned := c.brokersConcernedBy(r) // read before the image changes
	if err := c.image.Apply(offset, r); err != nil {
		return err
	}
	for _, id := range concerned {
		c.catchUpOffsets[id] = offset
	}
	return nil
}

// Restore replaces the image with one rebuilt from a snapshot (the
// quorum's catch-up of a node too far behind). Catch-up offsets older
// than the snapshot are gone with the log they were in: every broker
// must then have applied the snapshot itself before it counts as caught
// up. Restoring is refused while active, since only a follower
// is ever behind the log.
func (c *Controller) Restore(img *metadata.Image) {
	assert(!c.active, "restoring a snapshot into the active controller")
	c.image = img
	c.catchUpOffsets = map[int32]int64{}
	for _, id := range img.BrokerIDs() {
		c.catchUpOffsets[id] = img.Offset
	}
}

// operation is a queued operation: either run, which calls finish when
// its records are committed (or it gave up), or a request submitted with
// its plan, refuse and barrier (see submitWith), which runSubmitted
// carries out. It is queued as a value rather than as a closure over the
// request: every broker heartbeat is an operation.
type operation struct {
	run     func(finish func())
	barrier bool
	// leased: an answer that changes nothing goes at once only while
	// the controller's leadership lease holds, and waits for a no-op
	// commit otherwise (heartbeats).
	leased bool
	plan   func() (records []metadata.Record, answer func(*failure))
	refuse func(*failure)
	// request, when set, is a submitted request that is its own plan,
	// answer and refusal (submitRequest), in place of plan and refuse.
	request submittedRequest
}

// submittedRequest is a request that carries out its own operation: plan
// runs in its turn and returns the records to commit; answer is then
// called with the outcome, or refuse instead of both (see submit). A
// request answered this way is one allocation where plan, refuse and the
// answer plan returns would be three closures (every broker heartbeat is
// one).
type submittedRequest interface {
	plan() []metadata.Record
	answer(*failure)
	refuse(*failure)
}

// planned runs the operation's plan, returning its records and its answer
// (nil for a submittedRequest, which answers itself: see answerWith).
func (op *operation) planned() ([]metadata.Record, func(*failure)) {
	if op.request != nil {
		return op.request.plan(), nil
	}
	return op.plan()
}

// answerWith answers the operation's request with the outcome.
func (op *operation) answerWith(answer func(*failure), outcome *failure) {
	if op.request != nil {
		op.request.answer(outcome)
		return
	}
	answer(outcome)
}

// refuseWith refuses the operation's request.
func (op *operation) refuseWith(f *failure) {
	if op.request != nil {
		op.request.refuse(f)
		return
	}
	op.refuse(f)
}

// enqueue runs an operation once every earlier one has finished. It
// reports false when the queue is full.
func (c *Controller) enqueue(op operation) bool {
	if len(c.queue) >= operationsQueuedMax {
		return false
	}
	c.queue = append(c.queue, op)
	c.runNext()
	return true
}

// enqueueFirst runs an operation before every queued one (activation's
// barrier). It ignores the queue's bound: there is at most one barrier.
func (c *Controller) enqueueFirst(run func(finish func())) {
	c.queue = append([]operation{{run: run}}, c.queue...)
	c.runNext()
}

// runNext starts queued operations while none is running. An operation
// that finishes inside its own call (nothing to commit) lets the loop start
// the next one, rather than a nested call: a long run of such operations
// must not grow the stack.
func (c *Controller) runNext() {
	if c.running || c.draining {
		return
	}
	c.draining = true
	for !c.running && len(c.queue) > 0 {
		op := c.queue[0]
		c.queue[0] = operation{}
		if len(c.queue) == 1 {
			// Emptied: the next operation goes back to the start of
			// the array rather than into a new one (the queue is
			// usually one operation long).
			c.queue = c.queue[:0]
		} else {
			c.queue = c.queue[1:]
		}
		c.running = true
		c.started++
		if op.run != nil {
			started := c.started
			op.run(func() { c.finish(started) })
		} else {
			c.runSubmitted(op)
		}
	}
	c.draining = false
}

// finish ends the operation started as number started. An operation
// finishes once, while it is the one running: the count of operations
// started tells, where a flag of each operation's own, captured and set
// by its finish closure, was one more allocation per operation.
func (c *Controller) finish(started uint64) {
	assert(c.running && c.started == started, "operation finished twice")
	c.running = false
	c.runNext() // returns at once when called from the loop
}

// submit queues an operation. When its turn comes, plan validates the
// request against the committed image and returns the records to commit
// and answer, which is then called with the outcome: nil once the records
// are committed and applied to the image (at once when there are none), or
// why they were not. When the queue is full, or the controller is not the
// active one, refuse is called instead, before submit returns; an
// operation whose turn comes after the controller stopped being active,
// or before it is ready, is refused then (NOT_CONTROLLER).
func (c *Controller) submit(plan func() (records []metadata.Record, answer func(*failure)), refuse func(*failure)) {
	c.submitWith(false, plan, refuse)
}

// submitAdmin is submit for an administrator's request (creating and
// deleting topics, adding partitions, changing configs), whose answer a
// client takes for the cluster's state: when the plan changes nothing
// (every item refused, or validate-only), the answer still waits for a
// no-op record to commit. The plan read this controller's image, and a
// controller deposed without knowing it yet (cut off from the quorum)
// would answer from a stale one: TOPIC_ALREADY_EXISTS for a topic its
// successor has deleted, UNKNOWN_TOPIC_ID for one its successor created.
// The commit proves this controller still led after the plan was made, so
// nothing another leader committed can have changed what the plan read; a
// barrier that fails refuses the whole request, retriably (NOT_CONTROLLER,
// or REQUEST_TIMED_OUT). Kafka's controller answers from its image at once.
func (c *Controller) submitAdmin(plan func() (records []metadata.Record, answer func(*failure)), refuse func(*failure)) {
	c.submitWith(true, plan, refuse)
}

// submitWith is submit, with a no-op barrier before an answer that
// changes nothing when barrier is set (submitAdmin).
func (c *Controller) submitWith(barrier bool, plan func() (records []metadata.Record, answer func(*failure)), refuse func(*failure)) {
	c.submitOperation(operation{barrier: barrier, plan: plan, refuse: refuse})
}

// submitRequest is submit for a request that is its own plan, answer and
// refusal.
func (c *Controller) submitRequest(r submittedRequest) {
	c.submitOperation(operation{request: r})
}

func (c *Controller) submitOperation(op operation) {
	if !c.active {
		op.refuseWith(notController())
		return
	}
	if !c.enqueue(op) {
		op.refuseWith(queueFull())
	}
}

// runSubmitted carries out a submitted operation when its turn comes.
func (c *Controller) runSubmitted(op operation) {
	started := c.started
	// The controller may have lost its leadership while the operation
	// waited, or be active but not yet caught up.
	if !c.active || !c.ready {
		op.refuseWith(notController())
		c.finish(started)
		return
	}
	records, answer := op.planned()
	if len(records) > recordsPerOperationMax {
		violated("operation planned %d records, more than %d", len(records), recordsPerOperationMax)
	}
	if (op.barrier || op.leased && !c.holdsLeadershipLease()) && len(records) == 0 {
		waiting := op // captured here, not the parameter: on the heap only on this path
		c.propose([]metadata.Record{{NoOp: &metadata.NoOpRecord{}}}, func(err error) {
			if err != nil {
				waiting.refuseWith(proposalFailed(err))
			} else {
				waiting.answerWith(answer, nil)
			}
			c.finish(started)
		})
		return
	}
	if len(records) == 0 {
		// Nothing to commit (most heartbeats): answer at once, as
		// propose would, without making its callback.
		op.answerWith(answer, nil)
		c.finish(started)
		return
	}
	waiting := op
	c.propose(records, func(err error) {
		var outcome *failure
		if err != nil {
			outcome = proposalFailed(err)
		}
		// Answer before the next operation starts, so answers leave in
		// the order the operations ran.
		waiting.answerWith(answer, outcome)
		c.finish(started)
	})
}

// propose commits records and then calls done, inside an operation.
func (c *Controller) propose(records []metadata.Record, done func(err error)) {
	if len(records) == 0 {
		done(nil)
		return
	}
	c.log.Debug("proposing", "records", len(records))
	proposedAt := c.w.Clock.Elapsed()
	c.proposer.Propose(records, func(lastOffset int64, err error) {
		if err != nil {
			c.log.Warn("proposal failed", "records", len(records), "error", err)
		} else {
			c.log.Debug("committed", "records", len(records), "last_offset", lastOffset)
			c.confirmedAt, c.confirmed = max(c.confirmedAt, proposedAt), true
		}
		done(err)
	})
}

// holdsLeadershipLease reports whether no other controller can be active
// yet: a proposal of this one committed, proposed less than
// LeadershipLease ago. Its majority fetched from this leader after the
// proposal, and a voter that heard from its leader within the quorum's
// FetchTimeout refuses a pre-vote, so no successor is elected before a
// FetchTimeout has passed since then on one of that majority's clocks;
// a quarter of it leaves room for clocks running at different rates.
func (c *Controller) holdsLeadershipLease() bool {
	return c.config.LeadershipLease <= 0 ||
		c.confirmed && c.w.Clock.Elapsed()-c.confirmedAt < c.config.LeadershipLease
}

// newTopicID draws a random, non-zero topic id.
func (c *Controller) newTopicID() metadata.TopicID {
	for {
		var id metadata.TopicID
		for i := 0; i < len(id); i += 8 {
			v := c.w.Entropy.Uint64()
			for j := 0; j < 8; j++ {
				id[i+j] = byte(v >> (8 * j))
			}
		}
		if _, taken := c.image.TopicsByID[id]; !id.IsZero() && !taken {
			return id
		}
	}
}

func assert(condition bool, format string, args ...any) {
	if !condition {
		violated(format, args...)
	}
}

// violated panics with the message of a broken invariant. Code that runs
// on every request tests the condition itself and calls violated only
// when it fails: assert's arguments are boxed before the test, an
// allocation each for a string or a slice, even when the condition holds.
func violated(format string, args ...any) {
	panic(fmt.Sprintf("controller: "+format, args...))
}

// SetProposer connects the controller to its quorum. A node builds the
// quorum after the controller, because the quorum's replay feeds Apply.
func (c *Controller) SetProposer(p Proposer) { c.proposer = p }
