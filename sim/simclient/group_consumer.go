package simclient

import (
	"fmt"
	"slices"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"sluice/jepsen/history"
)

// GroupConsumerConfig is a group consumer's settings. Zero values take the
// defaults in limits.go.
type GroupConsumerConfig struct {
	// Group is group.id.
	Group string
	// Topic is the one topic the consumer subscribes to.
	Topic string
	// InstanceID is group.instance.id: set, the consumer is a static
	// member (KIP-345), which a restart rejoins as the same member
	// without a rebalance; empty, it is a dynamic member.
	InstanceID string
	// Assignors is partition.assignment.strategy: the assignors the
	// consumer offers, most preferred first ("range", "roundrobin",
	// "cooperative-sticky"); the coordinator picks one every member
	// offers. Default range. A consumer that offers cooperative-sticky
	// alone rebalances cooperatively (group_cooperative.go).
	Assignors []string

	SessionTimeout    time.Duration // session.timeout.ms
	RebalanceTimeout  time.Duration // max.poll.interval.ms, sent as the rebalance timeout
	HeartbeatInterval time.Duration // heartbeat.interval.ms; default a third of the session timeout

	FetchConfig
	// MetadataMaxAge is metadata.max.age.ms: how often the group's
	// leader refreshes its metadata to notice new partitions (see
	// group_partition_watch.go).
	MetadataMaxAge time.Duration

	// VerifyCommitChance is the chance that, once a commit is
	// acknowledged, the consumer reads its committed offsets back
	// (OffsetFetch, recorded as fetch-committed); it always does after
	// losing its coordinator. Kafka's consumer never does; a test client
	// does, so the committed-offset register check sees an acknowledged
	// commit that later vanishes.
	VerifyCommitChance float64
}

func (c GroupConsumerConfig) withDefaults() GroupConsumerConfig {
	if c.Group == "" || c.Topic == "" {
		panic("simclient: a group consumer needs a group and a topic")
	}
	if len(c.Assignors) == 0 {
		c.Assignors = []string{AssignorRange}
	}
	if len(c.Assignors) > assignorsMax {
		panic(fmt.Sprintf("simclient: %d assignors offered; at most %d", len(c.Assignors), assignorsMax))
	}
	for _, name := range c.Assignors {
		if !knownAssignor(name) {
			panic(fmt.Sprintf("simclient: unknown assignor %q", name))
		}
	}
	if c.SessionTimeout <= 0 {
		c.SessionTimeout = sessionTimeoutDefault
	}
	if c.RebalanceTimeout <= 0 {
		c.RebalanceTimeout = rebalanceTimeoutDefault
	}
	if c.HeartbeatInterval <= 0 {
		c.HeartbeatInterval = c.SessionTimeout / heartbeatsPerSession
	}
	c.FetchConfig = c.FetchConfig.withDefaults()
	if c.MetadataMaxAge <= 0 {
		c.MetadataMaxAge = metadataMaxAgeDefault
	}
	return c
}

// GroupConsumer is a consumer in a consumer group, speaking Kafka's classic
// group protocol: it finds the group's coordinator, joins (JoinGroup, with
// the MEMBER_ID_REQUIRED round trip), and syncs (SyncGroup; as leader it
// computes the assignment itself), then heartbeats on an interval while it
// reads its partitions from their committed offsets (OffsetFetch; none
// committed means the earliest) and commits its position after each poll
// that moved it (OffsetCommit, with its generation and member id). It
// rejoins when told of a rebalance or that its generation or member id is
// stale, and finds the coordinator again when told it moved. Eager by
// default, it gives up every partition before it rejoins; a cooperative
// one reads on while it rejoins (group_cooperative.go).
//
// It records in the history, on one process at a time: subscribe (invoked
// when a join starts, ok with the group, member, generation and assignment
// once SyncGroup hands it out), fetch-committed, poll and seek (as the
// Reader records them), and commit (ok, fail when the coordinator refused
// it before writing anything, info when it may have been written). A crash
// completes whatever was in flight as info, or records a crash; the
// process dies without leaving the group, which the coordinator learns
// only when the member's session expires.
type GroupConsumer struct {
	client    *Client
	config    GroupConsumerConfig
	recorder  *history.Recorder
	processes *Processes
	// process is the history process of the consumer's operations; it
	// changes after every info.
	process int
	// usedProcesses are every process the consumer recorded on, in the
	// order taken: one per info, so bounded by the history's size.
	usedProcesses []int

	// running is the program's wish: consume (Start) or not (Leave). It
	// survives a crash, and a restart starts again.
	running bool
	// leaving is set from Leave until the member has left.
	leaving bool
	// startAfterLeave is set by a Start that came while leaving.
	startAfterLeave bool

	membership groupMembership
	// stalledUntil is when a stall (a process frozen, as by a long GC
	// pause) ends; nothing is sent before it.
	stalledUntil int64

	// busy is set while the consumer's loop waits for a request, or
	// backs off inside a join: the loop runs one thing at a time.
	busy          bool
	stepScheduled bool
	// subscribe is the open subscribe op while a join is under way;
	// op is the open fetch-committed, poll or commit.
	subscribe *history.Pending
	op        *history.Pending

	heartbeatScheduled bool
	heartbeatInFlight  bool
	// stepEvent and heartbeatEvent are what the loop's step and
	// heartbeat events run, made once: the loop schedules them hundreds
	// of times a run, and a closure made for each was an allocation.
	stepEvent, heartbeatEvent func()
	// readBack are callers of ReadCommitted waiting for the next
	// fetch-committed to succeed.
	readBack   []func([]history.Commit)
	leaderNext int
	// skippedALeader: the last fetch passed a leader over for one with
	// records waiting (fetch in group_fetch.go).
	skippedALeader bool
	leaders        leaderGroups
	// fetching is what fetches are built and read with (see
	// fetchBuffers); fetchAnsweredEvent is fetchAnswered, made once.
	fetching           fetchBuffers
	fetchAnsweredEvent func(kmsg.Response, error)
	// committing is what commits are built with (see commitBuffers);
	// commitAnsweredEvent is commitAnswered, made once.
	committing          commitBuffers
	commitAnsweredEvent func(kmsg.Response, error)
	stats               GroupConsumerStats
	// joinedOnce says some incarnation of this consumer has joined the
	// group; it outlives crashes, for StaticRejoins only.
	joinedOnce bool
	// logStarts are the highest log start offsets answers showed (see
	// LogStart); they outlive crashes, as what a leader said does.
	logStarts logStarts
}

// LogStart is the highest log start offset of tp that any answer this
// consumer got showed, or 0 (see logStarts).
func (g *GroupConsumer) LogStart(tp history.TopicPartition) int64 { return g.logStarts[tp] }

// groupMembership is what a consumer process knows of its membership; a
// crash forgets all of it.
type groupMembership struct {
	// coordinator is the coordinator's "host:port", "" when unknown.
	coordinator string
	memberID    string
	// generation is the generation joined, -1 outside one.
	generation int32
	protocol   string
	// leadPartitions is how many partitions of the topic the assignment
	// covered, when this consumer computed it as the leader; 0 when
	// another member leads. watchDue is when the leader next looks at
	// the metadata for more (group_partition_watch.go), watching set
	// while it looks.
	leadPartitions int32
	watchDue       int64
	watching       bool
	// computed is the last assignment this consumer computed as a
	// leader (see leadCoverage); unlike leadPartitions, a rejoin does
	// not forget it.
	computed computedAssignment
	// joined is set once SyncGroup handed out this generation's
	// assignment, until the consumer rejoins or leaves.
	joined bool
	// rejoinNeeded is set when the coordinator said to rejoin: the loop
	// finishes what it is doing, commits, and joins again.
	rejoinNeeded bool
	// finalCommitTried is set once the commit before a rejoin or a leave
	// was sent, so a refused one is not tried forever.
	finalCommitTried bool
	// epoch goes up whenever membership is reset, so a late heartbeat
	// answer about an older membership is ignored.
	epoch int

	assigned  []history.TopicPartition
	positions map[history.TopicPartition]*groupPosition // lookups only
	// committedKnown is set once OffsetFetch has said where this
	// generation's partitions were committed.
	committedKnown bool
	// verifyPending asks the loop to read the committed offsets back.
	verifyPending bool

	// What only a cooperative member uses (group_cooperative.go).
	cooperative cooperativeMembership
}

// groupPosition is where the consumer is in one assigned partition.
type groupPosition struct {
	readPosition
	// committed is the group's committed offset as this consumer last
	// learned it (its own acknowledged commit, or OffsetFetch);
	// OffsetUnknown for none.
	committed int64
	// placed is set once the first OffsetFetch since the partition was
	// assigned set offset from the committed offset (or left it unknown,
	// for the earliest, when none was committed).
	placed bool
}

// GroupConsumerStats counts what a group consumer did.
type GroupConsumerStats struct {
	CoordinatorLookups, Joins, Syncs, Generations   int64
	Heartbeats, HeartbeatErrors, Rebalances         int64
	Commits, CommitsOK, CommitsFailed, CommitsInfo  int64
	FetchCommitted, Fetches, FetchesFailed, Records int64
	PollsEmpty, OutOfRange, Seeks, CorruptAnswers   int64
	Leaves, Stalls, LostToCrash, Errors             int64
	// PartitionsGrown counts the rebalances this consumer asked for as
	// leader because the topic gained partitions.
	PartitionsGrown int64
	// PartitionsAdded and PartitionsRevoked count the partitions a
	// cooperative member's assignments gave it and took from it;
	// PartitionsLost the ones it dropped without committing, its
	// membership gone.
	PartitionsAdded, PartitionsRevoked, PartitionsLost int64
	// StaticRejoins counts the joins of a static member that came back
	// with no member id (restarted) after it had been in the group:
	// the coordinator must recognize its group.instance.id (KIP-345).
	// SkippedAssignments counts the answers that made it leader with
	// SkipAssignment set (KIP-814).
	StaticRejoins, SkippedAssignments int64
}

// GroupMembership is a consumer's view of its membership, for a workload
// to judge whether the group has settled.
type GroupMembership struct {
	// MemberID is the member id the coordinator gave ("" before).
	MemberID   string
	Generation int32
	Assigned   []history.TopicPartition
	// Stable: the consumer has its generation's assignment and knows of
	// no reason to rejoin.
	Stable bool
}

// NewGroupConsumer builds a group consumer on a client. It does nothing
// until Start.
func NewGroupConsumer(c *Client, config GroupConsumerConfig, recorder *history.Recorder, processes *Processes) *GroupConsumer {
	g := &GroupConsumer{client: c, config: config.withDefaults(), recorder: recorder, processes: processes, logStarts: logStarts{}}
	g.fetchAnsweredEvent = g.fetchAnswered
	g.commitAnsweredEvent = g.commitAnswered
	g.stepEvent = func() {
		g.stepScheduled = false
		g.step()
	}
	g.heartbeatEvent = func() {
		g.heartbeatScheduled = false
		g.heartbeat()
	}
	g.takeProcess()
	g.forgetMembership()
	c.WantTopic(g.config.Topic)
	c.OnCrash(g.crashed)
	c.OnRestart(g.restarted)
	return g
}

// Start makes the consumer join the group and consume, now or once a
// leave under way is done.
func (g *GroupConsumer) Start() {
	if g.leaving {
		g.startAfterLeave = true
		return
	}
	g.running = true
	g.schedule(0)
}

// Leave makes the consumer commit its position and leave the group, as
// Kafka's consumer does when closed: a dynamic member sends LeaveGroup so
// the group rebalances at once; a static member does not (its instance is
// expected back), and the coordinator keeps its partitions until its
// session expires.
func (g *GroupConsumer) Leave() {
	g.startAfterLeave = false
	if !g.running || g.leaving {
		return
	}
	g.leaving = true
	g.schedule(0)
}

// Stall freezes the consumer for d, as a long GC pause or SIGSTOP would:
// it sends nothing (not even heartbeats) until then, and then carries on
// where it was, which may be committing with a generation the group has
// since left behind.
func (g *GroupConsumer) Stall(d time.Duration) {
	until := g.client.Now() + int64(d)
	if until <= g.stalledUntil || !g.client.Alive() {
		return
	}
	g.stats.Stalls++
	g.stalledUntil = until
	g.client.note(fmt.Sprintf("stalled for %v", d))
}

// Resume ends a stall now.
func (g *GroupConsumer) Resume() {
	if g.stalledUntil <= g.client.Now() {
		return
	}
	g.stalledUntil = 0
	if g.client.Alive() {
		g.schedule(0)
		g.scheduleHeartbeat(0)
	}
}

// ReadCommitted reads the committed offsets of the consumer's partitions
// back (a recorded fetch-committed) and calls done with them, once one
// such read succeeds. A crash or a rebalance first forgets the request.
func (g *GroupConsumer) ReadCommitted(done func([]history.Commit)) {
	g.readBack = append(g.readBack, done)
	g.schedule(0)
}

// Membership is the consumer's view of its membership.
func (g *GroupConsumer) Membership() GroupMembership {
	m := &g.membership
	return GroupMembership{
		MemberID:   m.memberID,
		Generation: m.generation,
		Assigned:   slices.Clone(m.assigned),
		Stable: g.running && !g.leaving && m.joined && !m.rejoinNeeded && m.coordinator != "" && g.client.Alive() &&
			!m.cooperative.joining && m.cooperative.next == nil && len(m.cooperative.revoking) == 0 && !m.cooperative.lost,
	}
}

// Committed is tp's committed offset as the consumer last learned it,
// OffsetUnknown if none or tp is not assigned to it.
func (g *GroupConsumer) Committed(tp history.TopicPartition) int64 {
	if p := g.membership.positions[tp]; p != nil {
		return p.committed
	}
	return history.OffsetUnknown
}

// Position is the next offset the consumer reads from tp, OffsetUnknown
// if it does not know or tp is not assigned to it.
func (g *GroupConsumer) Position(tp history.TopicPartition) int64 {
	if p := g.membership.positions[tp]; p != nil {
		return p.offset
	}
	return history.OffsetUnknown
}

// Processes lists every history process the consumer recorded on.
func (g *GroupConsumer) Processes() []int { return slices.Clone(g.usedProcesses) }

// Stats returns the consumer's counters.
func (g *GroupConsumer) Stats() GroupConsumerStats { return g.stats }

// Config is the consumer's settings.
func (g *GroupConsumer) Config() GroupConsumerConfig { return g.config }

// takeProcess moves the consumer to a new history process.
func (g *GroupConsumer) takeProcess() {
	g.process = g.processes.Next()
	g.usedProcesses = append(g.usedProcesses, g.process)
}

// forgetMembership drops everything the consumer knew of its membership,
// as a process that starts over.
func (g *GroupConsumer) forgetMembership() {
	epoch := g.membership.epoch + 1
	g.membership = groupMembership{generation: -1, epoch: epoch, positions: map[history.TopicPartition]*groupPosition{}}
}

// revoke gives up the generation's partitions before a rejoin (the eager
// protocol: a member owns nothing while the group rebalances), or when a
// cooperative member's membership is lost.
func (g *GroupConsumer) revoke() {
	m := &g.membership
	m.epoch++
	m.joined, m.rejoinNeeded, m.finalCommitTried = false, false, false
	m.generation = -1
	m.leadPartitions, m.watchDue, m.watching = 0, 0, false
	m.assigned = nil
	m.positions = map[history.TopicPartition]*groupPosition{}
	m.committedKnown, m.verifyPending = false, false
	m.cooperative = cooperativeMembership{}
	g.readBack = nil
	g.stats.Rebalances++
}

// schedule runs the loop's next step after delay, unless a step is
// already scheduled or a request is under way.
func (g *GroupConsumer) schedule(delay time.Duration) {
	if g.stepScheduled || g.busy || !g.client.Alive() {
		return
	}
	g.stepScheduled = true
	g.client.After(delay, "simclient.group-step", g.stepEvent)
}

// backOff steps again after the retry backoff.
func (g *GroupConsumer) backOff() { g.schedule(jitter(g.client, g.config.RetryBackoff)) }

// stalled reports whether the process is frozen, and for how long.
func (g *GroupConsumer) stalled() (time.Duration, bool) {
	left := g.stalledUntil - g.client.Now()
	return time.Duration(left), left > 0
}

// step sends the consumer's next request: what the membership lacks
// first, then what its partitions need.
func (g *GroupConsumer) step() {
	if !g.client.Alive() || g.busy || !(g.running || g.leaving) {
		return
	}
	if left, frozen := g.stalled(); frozen {
		g.schedule(left)
		return
	}
	g.maybeWatchPartitions()
	if g.cooperative() {
		g.stepCooperative()
		return
	}
	m := &g.membership
	switch {
	case g.leaving:
		g.leave()
	case m.coordinator == "":
		g.findCoordinator()
	case !m.joined:
		g.join()
	case m.rejoinNeeded:
		if g.dirty() && !m.finalCommitTried {
			// Commit what was read before giving the partitions
			// up (Kafka's eager consumer does, on rebalance).
			m.finalCommitTried = true
			g.commit()
			return
		}
		g.revoke()
		g.join()
	case len(m.assigned) == 0:
		// Nothing to read: wait for a heartbeat to say rebalance.
	case !m.committedKnown || m.verifyPending || len(g.readBack) > 0:
		g.fetchCommitted()
	case len(g.unknownPositions()) > 0:
		g.listEarliest(g.unknownPositions())
	case g.dirty():
		g.commit()
	default:
		g.fetch()
	}
}

// dirty reports whether some position differs from the committed offset.
func (g *GroupConsumer) dirty() bool {
	for _, tp := range g.committable() {
		if p := g.membership.positions[tp]; p.offset != history.OffsetUnknown && p.offset != p.committed {
			return true
		}
	}
	return false
}

// unknownPositions lists the assigned partitions without a position.
func (g *GroupConsumer) unknownPositions() []history.TopicPartition {
	var tps []history.TopicPartition
	for _, tp := range g.membership.assigned {
		if g.membership.positions[tp].offset == history.OffsetUnknown {
			tps = append(tps, tp)
		}
	}
	return tps
}

// invoke records the start of an operation on the consumer's process.
func (g *GroupConsumer) invoke(f history.Func, payload history.Payload) *history.Pending {
	op, err := g.recorder.Invoke(g.process, f, payload)
	if err != nil {
		panic(fmt.Sprintf("simclient: %s cannot record a %s: %v", g.client.Name(), f, err))
	}
	return op
}

// info completes op as unknown and moves to a new process, as Jepsen's
// rule for an info requires.
func (g *GroupConsumer) info(op *history.Pending, reason string) {
	op.Info(reason)
	g.takeProcess()
}

// crashed records what was in flight as info (the process died with it),
// or the crash itself, then forgets the membership: a restarted consumer
// starts over, and the coordinator must expire the member it was.
func (g *GroupConsumer) crashed() {
	switch {
	case g.op != nil:
		g.stats.LostToCrash++
		g.info(g.op, "client crashed with the operation in flight")
	case g.subscribe != nil:
		g.stats.LostToCrash++
		g.info(g.subscribe, "client crashed while joining the group")
	default:
		g.info(g.invoke(history.FuncCrash, history.Payload{}), "client crashed")
	}
	g.op, g.subscribe = nil, nil
	g.forgetMembership()
	g.busy, g.stepScheduled = false, false
	g.heartbeatScheduled, g.heartbeatInFlight = false, false
	g.readBack = nil
	g.stalledUntil = 0
	if g.leaving {
		// The process died on its way out: it is out.
		g.leaving, g.running = false, g.startAfterLeave
		g.startAfterLeave = false
	}
}

// restarted starts consuming again if the program was consuming.
func (g *GroupConsumer) restarted() {
	if g.running {
		g.schedule(0)
	}
}

// finishLeave ends a leave: the member is gone from this process's point
// of view, and the consumer stops (or starts over, if asked meanwhile).
func (g *GroupConsumer) finishLeave() {
	g.stats.Leaves++
	g.client.note(fmt.Sprintf("left group %s", g.config.Group))
	g.forgetMembership()
	g.leaving = false
	g.running = g.startAfterLeave
	g.startAfterLeave = false
	if g.running {
		g.schedule(0)
	}
}
