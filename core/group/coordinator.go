package group

import (
	"log/slog"

	"github.com/twmb/franz-go/pkg/kerr"

	"sluice/core"
)

// Coordinator coordinates the groups of every __consumer_offsets partition
// this node leads. All its methods run on the node's loop. A request whose
// group lives in a partition this node does not lead is answered
// NOT_COORDINATOR; one whose partition is still being replayed,
// COORDINATOR_LOAD_IN_PROGRESS.
type Coordinator struct {
	w       core.World
	logger  *slog.Logger
	config  Config
	storage Log
	// partitionExists says whether the cluster has a topic partition:
	// commits to partitions that do not exist are refused with
	// UNKNOWN_TOPIC_OR_PARTITION, as Kafka's broker does.
	partitionExists func(topic string, partition int32) bool

	// partitionCount is how many partitions __consumer_offsets has (or
	// will have), which PartitionFor needs.
	partitionCount int32
	// partitions are the offsets partitions this node leads, loading or
	// loaded.
	partitions map[int32]*partitionState
	// groupCount counts the groups of every loaded partition, against
	// groupsPerNodeMax.
	groupCount int

	retentionTimer core.Timer
	closed         bool
}

// partitionState is one __consumer_offsets partition this node leads.
type partitionState struct {
	index       int32
	leaderEpoch int32
	// loader replays the partition; nil once loaded.
	loader *loader
	groups map[string]*group
	// writes are this partition's appends not yet committed, oldest
	// first; unloading answers them.
	writes []*pendingWrite
	// unloaded is set when this node stops leading the partition, for
	// callbacks that still hold it.
	unloaded bool
}

func (p *partitionState) loading() bool { return p.loader != nil }

// New returns a coordinator that leads no partition yet. storage is where
// it writes; partitionExists tells it which topic partitions the cluster
// has.
func New(w core.World, config Config, storage Log, partitionExists func(topic string, partition int32) bool) (*Coordinator, error) {
	if err := config.Validate(); err != nil {
		return nil, err
	}
	c := &Coordinator{
		w:               w,
		logger:          w.Log.With("component", "group-coordinator"),
		config:          config,
		storage:         storage,
		partitionExists: partitionExists,
		partitionCount:  config.OffsetsTopicPartitions,
		partitions:      map[int32]*partitionState{},
	}
	return c, nil
}

// PartitionFor is the offsets partition that holds groupID.
func (c *Coordinator) PartitionFor(groupID string) int32 {
	return PartitionFor(groupID, c.partitionCount)
}

// SetPartitionCount tells the coordinator how many partitions
// __consumer_offsets really has, which wins over the configured count once
// the topic exists (as in Kafka, where a topic created with another count
// keeps it).
func (c *Coordinator) SetPartitionCount(partitions int32) {
	if partitions < 1 || partitions == c.partitionCount {
		return
	}
	if len(c.partitions) > 0 {
		c.logger.Error("the offsets topic's partition count changed under loaded groups; groups will move",
			"from", c.partitionCount, "to", partitions)
	}
	c.partitionCount = partitions
}

// Load starts serving an offsets partition this node now leads at
// leaderEpoch: its records are replayed (COORDINATOR_LOAD_IN_PROGRESS
// meanwhile), then its groups are served. Loading again for the same
// epoch does nothing; for a new epoch the partition is reloaded.
func (c *Coordinator) Load(partition int32, leaderEpoch int32) {
	if c.closed {
		return
	}
	if p := c.partitions[partition]; p != nil {
		if p.leaderEpoch == leaderEpoch {
			return
		}
		c.Unload(partition)
	}
	p := &partitionState{index: partition, leaderEpoch: leaderEpoch, groups: map[string]*group{}}
	c.partitions[partition] = p
	if c.retentionTimer == nil {
		c.scheduleRetentionCheck()
	}
	c.logger.Info("loading offsets partition", "partition", partition, "leader_epoch", leaderEpoch)
	c.startLoading(p)
}

// Unload stops serving an offsets partition this node no longer leads:
// its groups are forgotten (they live on in the log, for the next
// leader), and every request waiting on them is answered NOT_COORDINATOR.
func (c *Coordinator) Unload(partition int32) {
	p := c.partitions[partition]
	if p == nil {
		return
	}
	delete(c.partitions, partition)
	p.unloaded = true
	if p.loader != nil {
		p.loader.stop()
		p.loader = nil
	}
	for _, id := range sortedKeys(p.groups) {
		c.unloadGroup(p.groups[id])
	}
	c.groupCount -= len(p.groups)
	clear(p.groups)
	writes := p.writes
	p.writes = nil
	for _, write := range writes {
		write.finish(kerr.NotCoordinator)
	}
	if c.groupCount < 0 {
		panic("group: negative group count after unloading")
	}
	if len(c.partitions) == 0 && c.retentionTimer != nil {
		// Nothing to expire until this node leads a partition again.
		c.retentionTimer.Stop()
		c.retentionTimer = nil
	}
	c.logger.Info("unloaded offsets partition", "partition", partition)
}

// HighWatermarkMoved tells the coordinator that an offsets partition's
// high watermark moved, which a partition still loading may be waiting
// for.
func (c *Coordinator) HighWatermarkMoved(partition int32) {
	if p := c.partitions[partition]; p != nil && p.loader != nil {
		p.loader.highWatermarkMoved()
	}
}

// Close stops the coordinator: timers stop and waiting requests are
// answered NOT_COORDINATOR. Nothing is lost: everything acknowledged is in
// the log.
func (c *Coordinator) Close() {
	if c.closed {
		return
	}
	c.closed = true
	if c.retentionTimer != nil {
		c.retentionTimer.Stop()
	}
	for _, partition := range sortedKeys(c.partitions) {
		c.Unload(partition)
	}
}

// serving returns the partition holding groupID when this node serves it
// now, or the error to answer: COORDINATOR_NOT_AVAILABLE once closed,
// COORDINATOR_LOAD_IN_PROGRESS while it loads, NOT_COORDINATOR when
// another node leads it.
func (c *Coordinator) serving(groupID string) (*partitionState, error) {
	if c.closed {
		return nil, kerr.CoordinatorNotAvailable
	}
	p := c.partitions[c.PartitionFor(groupID)]
	switch {
	case p == nil:
		return nil, kerr.NotCoordinator
	case p.loading() && !c.canaryOn(CanaryServesWhileLoading):
		return nil, kerr.CoordinatorLoadInProgress
	}
	return p, nil
}

// createGroup adds a new, empty group to p, unless the node already
// coordinates groupsPerNodeMax groups.
func (c *Coordinator) createGroup(p *partitionState, id string) (*group, error) {
	if c.groupCount >= groupsPerNodeMax {
		c.logger.Warn("refusing a new group: too many groups on this node", "group", id, "limit", groupsPerNodeMax)
		return nil, kerr.CoordinatorNotAvailable
	}
	g := newGroup(id, p, stateEmpty, c.now())
	p.groups[id] = g
	c.groupCount++
	return g, nil
}

// removeGroup forgets a group that was deleted or expired.
func (c *Coordinator) removeGroup(g *group) {
	if g.partition.groups[g.id] != g {
		return
	}
	c.stopGroupTimers(g)
	delete(g.partition.groups, g.id)
	c.groupCount--
}

// unloadGroup ends a group's life on this node as Kafka's onGroupUnloaded
// does: it is Dead here, and whoever waits on it hears NOT_COORDINATOR and
// goes to find the new coordinator.
func (c *Coordinator) unloadGroup(g *group) {
	g.transition(stateDead, c.now())
	c.stopGroupTimers(g)
	for _, m := range g.members {
		m.stopSessionTimer()
		// A parked join exists only while preparing a rebalance, a
		// parked sync only while completing one.
		c.answerJoinError(g, m, m.id, kerr.NotCoordinator)
		c.answerSyncError(m, kerr.NotCoordinator)
	}
}

// stopGroupTimers stops the group's own timers and its pending members'.
func (c *Coordinator) stopGroupTimers(g *group) {
	if g.joinTimer != nil {
		g.joinTimer.Stop()
		g.joinTimer = nil
	}
	if g.syncTimer != nil {
		g.syncTimer.Stop()
		g.syncTimer = nil
	}
	for _, id := range sortedKeys(g.pendingMembers) {
		g.forgetPendingMember(id)
	}
}

// live reports whether g is still a group this node serves: timers and
// write completions that hold a group check it before touching it.
func (c *Coordinator) live(g *group) bool {
	return !g.partition.unloaded && g.partition.groups[g.id] == g && !g.is(stateDead)
}

// now is the wall clock in milliseconds, for the timestamps Kafka keeps.
func (c *Coordinator) now() int64 { return c.w.Clock.Now().UnixMilli() }

// canaryOn reports whether a planted bug is switched on.
func (c *Coordinator) canaryOn(name string) bool { return c.w.Canaries.On(name) }
