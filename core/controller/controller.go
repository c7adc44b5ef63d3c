package controller

import (
	"fmt"
	"log/slog"

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
}

// Controller is the metadata state machine.
type Controller struct {
	w        core.World
	log      *slog.Logger
	config   Config
	proposer Proposer
	image    *metadata.Image

	// queue holds the operations waiting their turn; running is set while
	// one is between its start and its finish, draining while runNext's
	// loop is starting operations.
	queue    []func(finish func())
	running  bool
	draining bool
}

// New returns a controller that proposes through p. Its image starts empty
// and follows the committed records given to Apply.
func New(w core.World, config Config, p Proposer) *Controller {
	return &Controller{w: w, log: w.Log.With("role", "controller"), config: config, proposer: p, image: metadata.NewImage()}
}

// Image is the controller's committed view. Callers must not modify it.
func (c *Controller) Image() *metadata.Image { return c.image }

// Apply applies one committed record to the controller's image.
func (c *Controller) Apply(offset int64, r metadata.Record) error {
	return c.image.Apply(offset, r)
}

// enqueue runs an operation once every earlier one has finished; the
// operation calls finish when its records are committed (or it gave up).
// It reports false when the queue is full.
func (c *Controller) enqueue(op func(finish func())) bool {
	if len(c.queue) >= operationsQueuedMax {
		return false
	}
	c.queue = append(c.queue, op)
	c.runNext()
	return true
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
		c.queue[0] = nil
		c.queue = c.queue[1:]
		c.running = true
		finished := false
		op(func() {
			assert(!finished, "operation finished twice")
			finished = true
			c.running = false
			c.runNext() // returns at once when called from the loop
		})
	}
	c.draining = false
}

// submit queues an operation. When its turn comes, plan validates the
// request against the committed image and returns the records to commit
// and answer, which is then called with the outcome: nil once the records
// are committed and applied to the image (at once when there are none), or
// why they were not. When the queue is full, refuse is called instead,
// before submit returns.
func (c *Controller) submit(plan func() (records []metadata.Record, answer func(*failure)), refuse func(*failure)) {
	accepted := c.enqueue(func(finish func()) {
		records, answer := plan()
		assert(len(records) <= recordsPerOperationMax, "operation planned %d records, more than %d", len(records), recordsPerOperationMax)
		c.propose(records, func(err error) {
			var outcome *failure
			if err != nil {
				outcome = proposalFailed(err)
			}
			// Answer before the next operation starts, so answers
			// leave in the order the operations ran.
			answer(outcome)
			finish()
		})
	})
	if !accepted {
		refuse(queueFull())
	}
}

// propose commits records and then calls done, inside an operation.
func (c *Controller) propose(records []metadata.Record, done func(err error)) {
	if len(records) == 0 {
		done(nil)
		return
	}
	c.proposer.Propose(records, func(_ int64, err error) {
		if err != nil {
			c.log.Warn("proposal failed", "records", len(records), "error", err)
		}
		done(err)
	})
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
		panic(fmt.Sprintf("controller: "+format, args...))
	}
}

// SetProposer connects the controller to its quorum. A node builds the
// quorum after the controller, because the quorum's replay feeds Apply.
func (c *Controller) SetProposer(p Proposer) { c.proposer = p }
