package controller

import (
	"fmt"
	"log/slog"

	"sluice/core"
	"sluice/core/metadata"
)

// operationsQueuedMax bounds the admin operations waiting their turn.
const operationsQueuedMax = 10_000

// Proposer commits records: the quorum, from the controller's side.
type Proposer interface {
	// Propose appends records and calls done once they are committed
	// (and applied through Controller.Apply), or with an error.
	Propose(records []metadata.Record, done func(lastOffset int64, err error))
}

// Config holds the controller's settings.
type Config struct {
	// DefaultPartitions is num.partitions.
	DefaultPartitions int32
	// DefaultReplicationFactor is default.replication.factor.
	DefaultReplicationFactor int16
	// TopicDefaults are broker-level defaults for topic configs, shown by
	// DescribeConfigs as DEFAULT_CONFIG... (see the broker).
	TopicDefaults map[string]string
}

// Controller is the metadata state machine.
type Controller struct {
	w        core.World
	log      *slog.Logger
	config   Config
	proposer Proposer
	image    *metadata.Image

	queue   []func(finish func())
	running bool
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

func (c *Controller) runNext() {
	if c.running || len(c.queue) == 0 {
		return
	}
	op := c.queue[0]
	c.queue = c.queue[1:]
	c.running = true
	finished := false
	op(func() {
		if finished {
			panic("controller: operation finished twice")
		}
		finished = true
		c.running = false
		c.runNext()
	})
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
