package harness

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"sluice/jepsen/bench"
)

// Idempotence says which producers are idempotent.
type Idempotence string

const (
	// IdempotenceMixed: half the producers idempotent, half not.
	IdempotenceMixed Idempotence = "mixed"
	IdempotenceOn    Idempotence = "on"
	IdempotenceOff   Idempotence = "off"
)

// ParseIdempotence reads an Idempotence's name.
func ParseIdempotence(name string) (Idempotence, error) {
	switch i := Idempotence(name); i {
	case IdempotenceMixed, IdempotenceOn, IdempotenceOff:
		return i, nil
	}
	return "", fmt.Errorf("idempotence %q: want mixed, on or off", name)
}

// Balancer is the group members' partition assignor.
type Balancer string

const (
	// BalancerRange is Kafka's eager RangeAssignor: every rebalance
	// revokes every partition before the group is assigned again.
	BalancerRange Balancer = "range"
	// BalancerCooperativeSticky is KIP-429's incremental protocol, the
	// default of franz-go and of Kafka's Java consumer since 3.0 (after
	// range): members keep fetching and committing the partitions they
	// keep while the group rebalances, and a partition moves in two
	// rebalances, revoked by its owner in the first and assigned in the
	// second.
	BalancerCooperativeSticky Balancer = "cooperative-sticky"
)

// ParseBalancer reads a Balancer's name.
func ParseBalancer(name string) (Balancer, error) {
	switch b := Balancer(name); b {
	case BalancerRange, BalancerCooperativeSticky:
		return b, nil
	}
	return "", fmt.Errorf("balancer %q: want range or cooperative-sticky", name)
}

// ChurnExit is how the churning operator's members end.
type ChurnExit string

const (
	// ChurnExitLeave: the member closes, as a consumer shut down on
	// purpose does (kgo's Close: a dynamic member sends LeaveGroup, and
	// the group rebalances at once).
	ChurnExitLeave ChurnExit = "leave"
	// ChurnExitCrash: the member's process dies, as a consumer killed
	// with SIGKILL or by its machine's power does: its connections are
	// cut mid-request and nothing more it says reaches a broker, so the
	// coordinator learns of it only by its silence, after
	// session.timeout.ms, and its partitions wait that long.
	ChurnExitCrash ChurnExit = "crash"
	// ChurnExitMixed: every other member crashes, starting with the
	// second; the rest leave.
	ChurnExitMixed ChurnExit = "mixed"
)

// ParseChurnExit reads a ChurnExit's name.
func ParseChurnExit(name string) (ChurnExit, error) {
	switch e := ChurnExit(name); e {
	case ChurnExitLeave, ChurnExitCrash, ChurnExitMixed:
		return e, nil
	}
	return "", fmt.Errorf("churn exit %q: want leave, crash or mixed", name)
}

// crashes reports whether the churning operator's member of the given
// round (from 0) crashes rather than leaves.
func (e ChurnExit) crashes(round int) bool {
	switch e {
	case ChurnExitCrash:
		return true
	case ChurnExitMixed:
		return round%2 == 1
	}
	return false
}

// Workload is what the clients do during a run.
type Workload struct {
	Topic                 string
	Partitions            int32
	ReplicationFactor     int16
	MinInsyncReplicas     int
	UncleanLeaderElection bool

	// AcksAll asks for acks=all; otherwise producers use acks=1 (and
	// none can be idempotent).
	AcksAll     bool
	Idempotence Idempotence
	// Producers is the number of producer clients; each runs
	// ProducerConcurrency processes, one record in flight each.
	Producers           int
	ProducerConcurrency int
	// SendsPerSecond caps the sends of all producers together.
	SendsPerSecond int
	// BatchRecords is how many records each send carries (one when
	// zero): handed to the client together, to one partition, they go
	// out as one batch, as an application's burst does.
	BatchRecords int
	// Compression is the producers' compression.type by name (none,
	// gzip, snappy, lz4, zstd); empty keeps franz-go's default, snappy.
	Compression string
	// AssignConsumers read every partition by assignment; GroupMembers
	// consume as one group with manual commits.
	AssignConsumers int
	GroupMembers    int
	Group           string
	// Balancer is how the group assigns partitions; range when empty.
	Balancer Balancer
	// Static gives every group member a group.instance.id (KIP-345): a
	// member that closes does not leave, and one that comes back under
	// the same id takes its place without a rebalance.
	Static bool
	// ChurnEvery, when set, has an operator add a member to the group
	// and take it out again, in turn, this often (churner.go).
	ChurnEvery time.Duration
	// ChurnExit is how those members go; leave when empty.
	ChurnExit ChurnExit
	// DeleteEvery, when set (and there is a group), has an operator
	// delete what the group has consumed every DeleteEvery (deleter.go).
	DeleteEvery time.Duration
	// RecreateEvery, when set, has an operator delete a topic of its own
	// (the workload's topic name and "-scratch") and create it again
	// this often, writing to each incarnation (recreator.go).
	RecreateEvery time.Duration
	// ElectEvery, when set, has an operator run preferred leader
	// elections for every partition of the topic this often
	// (elector.go).
	ElectEvery time.Duration
	// AlterEvery, when set, has an operator turn the topic's
	// unclean.leader.election.enable on and off in turn this often
	// (alterer.go).
	AlterEvery time.Duration
	// ReassignEvery, when set, has an operator move a random partition
	// of the topic to a random set of ReplicationFactor nodes, or cancel
	// its reassignment in progress, this often (reassigner.go).
	ReassignEvery time.Duration
}

// DefaultWorkload is the workload `sluice jepsen` runs unless told
// otherwise: 4 partitions, RF 3 (or the cluster's size if smaller),
// min.insync.replicas 2, acks=all, two producers (one idempotent), one
// assign consumer, a group of two.
func DefaultWorkload(nodes int) Workload {
	rf := int16(min(3, nodes))
	return Workload{
		Topic: "jepsen", Partitions: 4, ReplicationFactor: rf, MinInsyncReplicas: min(2, int(rf)),
		AcksAll: true, Idempotence: IdempotenceMixed,
		Producers: 2, ProducerConcurrency: 4, SendsPerSecond: 200,
		AssignConsumers: 1, GroupMembers: 2, Group: "jepsen-group", Balancer: BalancerRange,
	}
}

// LossPermitted reports whether the workload's settings allow losing
// acknowledged writes: acks=1 anywhere, or unclean leader elections where
// a controller elects a leader outside the ISR. A single in-sync replica
// is not enough: a leader acknowledges acks=all once its own fsync holds
// the write, and only an unclean election can elect another replica in
// its place while it is the whole ISR.
func (w Workload) LossPermitted() bool {
	return !w.AcksAll || w.UncleanLeaderElection
}

func (w Workload) validate(nodes int) error {
	switch {
	case w.Topic == "" || strings.ContainsAny(w.Topic, " /\\"):
		return fmt.Errorf("topic %q: a plain name, please", w.Topic)
	case w.Partitions < 1 || w.Partitions > workloadPartitionsMax:
		return fmt.Errorf("%d partitions: between 1 and %d", w.Partitions, workloadPartitionsMax)
	case w.ReplicationFactor < 1 || int(w.ReplicationFactor) > nodes:
		return fmt.Errorf("replication factor %d: between 1 and the %d nodes", w.ReplicationFactor, nodes)
	case w.MinInsyncReplicas < 1 || w.MinInsyncReplicas > int(w.ReplicationFactor):
		return fmt.Errorf("min.insync.replicas %d: between 1 and the replication factor %d", w.MinInsyncReplicas, w.ReplicationFactor)
	case w.Producers < 1 || w.Producers > workloadClientsMax || w.ProducerConcurrency < 1 || w.ProducerConcurrency > workloadClientsMax:
		return fmt.Errorf("%d producers × %d: each between 1 and %d", w.Producers, w.ProducerConcurrency, workloadClientsMax)
	case w.SendsPerSecond < 1 || w.SendsPerSecond > workloadSendsPerSecondMax:
		return fmt.Errorf("%d sends per second: between 1 and %d", w.SendsPerSecond, workloadSendsPerSecondMax)
	case w.BatchRecords < 0 || w.BatchRecords > workloadBatchRecordsMax:
		return fmt.Errorf("%d records per send: between 1 and %d", w.BatchRecords, workloadBatchRecordsMax)
	case w.AssignConsumers < 0 || w.AssignConsumers > workloadClientsMax || w.GroupMembers < 0 || w.GroupMembers > workloadClientsMax:
		return fmt.Errorf("%d assign consumers, %d group members: each between 0 and %d", w.AssignConsumers, w.GroupMembers, workloadClientsMax)
	case w.GroupMembers > 0 && w.Group == "":
		return errors.New("group members without a group name")
	case w.ChurnEvery < 0:
		return fmt.Errorf("churn every %v: not negative (0 for never)", w.ChurnEvery)
	case w.ChurnEvery > 0 && w.Group == "":
		return errors.New("group churn without a group name")
	case w.ChurnExit != "" && w.ChurnExit != ChurnExitLeave && w.ChurnEvery == 0:
		return fmt.Errorf("churn exit %s without group churn: set a churn interval", w.ChurnExit)
	case w.ReassignEvery < 0:
		return fmt.Errorf("reassign every %v: not negative (0 for never)", w.ReassignEvery)
	case w.RecreateEvery < 0 || w.RecreateEvery > 0 && w.RecreateEvery < recreateEveryMin:
		return fmt.Errorf("recreate every %v: at least %v, or 0 for never", w.RecreateEvery, recreateEveryMin)
	case !w.AcksAll && w.Idempotence != IdempotenceOff:
		return errors.New("acks=1 producers cannot be idempotent: set idempotence off")
	}
	if _, err := ParseIdempotence(string(w.Idempotence)); err != nil {
		return err
	}
	if w.ChurnExit != "" {
		if _, err := ParseChurnExit(string(w.ChurnExit)); err != nil {
			return err
		}
	}
	if w.Balancer != "" {
		if _, err := ParseBalancer(string(w.Balancer)); err != nil {
			return err
		}
	}
	if w.Compression != "" {
		if _, err := bench.CompressionCodec(w.Compression); err != nil {
			return err
		}
	}
	return nil
}

// instanceID is the group.instance.id of the member named name: the group
// and the name when members are static, none otherwise.
func (w Workload) instanceID(name string) string {
	if !w.Static {
		return ""
	}
	return w.Group + "-" + name
}

// clients is every client of a running workload.
type clients struct {
	producers  []*producer
	assign     []*assignConsumer
	members    []*groupMember
	reader     *committedReader
	deleter    *deleter
	recreator  *recreator
	elector    *elector
	alterer    *alterer
	reassigner *reassigner
	churner    *churner

	cancel  context.CancelFunc
	ticker  *time.Ticker
	mutex   sync.Mutex
	failure error
}

// startClients starts the workload's clients, sending and consuming until
// stop. seed decides the operators' draws.
func startClients(cluster *Cluster, log *historyLog, w Workload, seed uint64) (*clients, error) {
	c := &clients{}
	fail := func(err error) {
		c.mutex.Lock()
		defer c.mutex.Unlock()
		c.failure = errors.Join(c.failure, err)
	}
	for i := range w.Producers {
		idempotent := w.Idempotence == IdempotenceOn || (w.Idempotence == IdempotenceMixed && i%2 == 0)
		name := fmt.Sprintf("p%d", i)
		if idempotent {
			name = fmt.Sprintf("i%d", i)
		}
		p, err := newProducer(cluster, log, w.Topic, w.Partitions, producerSettings{
			name: name, index: i, acksAll: w.AcksAll, idempotent: idempotent, concurrency: w.ProducerConcurrency,
			batchRecords: max(1, w.BatchRecords), compression: w.Compression,
		})
		if err != nil {
			c.closeAll()
			return nil, err
		}
		c.producers = append(c.producers, p)
	}
	for range w.AssignConsumers {
		consumer, err := newAssignConsumer(cluster, log, w.Topic, w.Partitions)
		if err != nil {
			c.closeAll()
			return nil, err
		}
		c.assign = append(c.assign, consumer)
	}
	for i := range w.GroupMembers {
		name := fmt.Sprintf("m%d", i)
		member, err := newGroupMember(cluster, log, w.Group, w.Topic, name, w.Balancer, w.instanceID(name))
		if err != nil {
			c.closeAll()
			return nil, err
		}
		c.members = append(c.members, member)
	}
	if w.GroupMembers > 0 {
		reader, err := newCommittedReader(cluster, log, w.Group, w.Topic, w.Partitions)
		if err != nil {
			c.closeAll()
			return nil, err
		}
		c.reader = reader
	}
	if w.GroupMembers > 0 && w.DeleteEvery > 0 {
		d, err := newDeleter(cluster, log, w.Group, w.Topic, w.Partitions, w.DeleteEvery)
		if err != nil {
			c.closeAll()
			return nil, err
		}
		c.deleter = d
	}
	if w.AlterEvery > 0 {
		a, err := newAlterer(cluster, w.Topic, w.AlterEvery)
		if err != nil {
			c.closeAll()
			return nil, err
		}
		c.alterer = a
	}
	if w.ElectEvery > 0 {
		e, err := newElector(cluster, w.Topic, w.Partitions, w.ElectEvery)
		if err != nil {
			c.closeAll()
			return nil, err
		}
		c.elector = e
	}
	if w.ReassignEvery > 0 {
		r, err := newReassigner(cluster, w, seed)
		if err != nil {
			c.closeAll()
			return nil, err
		}
		c.reassigner = r
	}
	if w.ChurnEvery > 0 {
		c.churner = newChurner(cluster, log, w, fail)
	}
	if w.RecreateEvery > 0 {
		recreator, err := newRecreator(cluster, w)
		if err != nil {
			c.closeAll()
			return nil, err
		}
		c.recreator = recreator
	}
	ctx, cancel := context.WithCancel(context.Background())
	c.cancel = cancel
	c.ticker = time.NewTicker(time.Second / time.Duration(w.SendsPerSecond))
	for _, p := range c.producers {
		p.start(ctx, c.ticker.C, fail)
	}
	for _, consumer := range c.assign {
		consumer.start(ctx, fail)
	}
	for _, member := range c.members {
		member.start(ctx, fail)
	}
	if c.reader != nil {
		c.reader.start(ctx, fail)
	}
	if c.deleter != nil {
		c.deleter.start(ctx)
	}
	if c.recreator != nil {
		c.recreator.start(ctx)
	}
	if c.elector != nil {
		c.elector.start(ctx)
	}
	if c.alterer != nil {
		c.alterer.start(ctx)
	}
	if c.reassigner != nil {
		c.reassigner.start(ctx)
	}
	if c.churner != nil {
		c.churner.start(ctx)
	}
	return c, nil
}

// stop ends every client: the producers once each record in flight is
// answered, the consumers after their current poll. It returns the first
// client failure (a broken history discipline, a full history).
func (c *clients) stop() error {
	c.cancel()
	c.ticker.Stop()
	var wait sync.WaitGroup
	for _, p := range c.producers {
		wait.Add(1)
		go func() { defer wait.Done(); p.stop() }()
	}
	for _, consumer := range c.assign {
		wait.Add(1)
		go func() { defer wait.Done(); consumer.stop() }()
	}
	for _, member := range c.members {
		wait.Add(1)
		go func() { defer wait.Done(); member.stop() }()
	}
	if c.reader != nil {
		wait.Add(1)
		go func() { defer wait.Done(); c.reader.stop() }()
	}
	if c.deleter != nil {
		wait.Add(1)
		go func() { defer wait.Done(); c.deleter.stop() }()
	}
	if c.elector != nil {
		wait.Add(1)
		go func() { defer wait.Done(); c.elector.stop() }()
	}
	if c.alterer != nil {
		wait.Add(1)
		go func() { defer wait.Done(); c.alterer.stop() }()
	}
	if c.reassigner != nil {
		wait.Add(1)
		go func() { defer wait.Done(); c.reassigner.stop() }()
	}
	if c.churner != nil {
		wait.Add(1)
		go func() { defer wait.Done(); c.churner.wait() }()
	}
	if c.recreator != nil {
		wait.Add(1)
		go func() {
			defer wait.Done()
			if err := c.recreator.stop(recoveryTimeout); err != nil {
				c.mutex.Lock()
				c.failure = errors.Join(c.failure, err)
				c.mutex.Unlock()
			}
		}()
	}
	wait.Wait()
	c.mutex.Lock()
	defer c.mutex.Unlock()
	return c.failure
}

// closeAll closes clients that were made but never started.
func (c *clients) closeAll() {
	for _, p := range c.producers {
		p.client.Close()
	}
	for _, consumer := range c.assign {
		consumer.client.Close()
	}
	for _, member := range c.members {
		member.client.Close()
	}
	if c.reader != nil {
		c.reader.client.Close()
	}
	if c.deleter != nil {
		c.deleter.client.Close()
	}
	if c.recreator != nil {
		c.recreator.client.Close()
	}
	if c.elector != nil {
		c.elector.client.Close()
	}
	if c.alterer != nil {
		c.alterer.client.Close()
	}
	if c.reassigner != nil {
		c.reassigner.client.Close()
	}
}

// progress is a one-line summary of what the clients have done.
func (c *clients) progress() string {
	var acked, unknown, polled, grouped, commits, rebalances int64
	for _, p := range c.producers {
		acked += p.acknowledged.Load()
		unknown += p.unknown.Load()
	}
	for _, consumer := range c.assign {
		polled += consumer.polled.Load()
	}
	for _, member := range c.members {
		grouped += member.polled.Load()
		commits += member.commits.Load()
		rebalances += member.subscribes.Load()
	}
	line := fmt.Sprintf("sends ok=%d unknown=%d; assign polled=%d; group polled=%d commits=%d assignments=%d",
		acked, unknown, polled, grouped, commits, rebalances)
	if c.deleter != nil {
		line += fmt.Sprintf("; deletes sent=%d answered=%d", c.deleter.sent.Load(), c.deleter.ok.Load())
	}
	if c.recreator != nil {
		recreated, writes, acked, confirmed := c.recreator.counts()
		line += fmt.Sprintf("; recreated=%d writes=%d acked=%d confirmed=%d", recreated, writes, acked, confirmed)
	}
	if c.elector != nil {
		line += fmt.Sprintf("; elections sent=%d elected=%d", c.elector.sent.Load(), c.elector.elected.Load())
	}
	if c.alterer != nil {
		line += fmt.Sprintf("; unclean toggles sent=%d confirmed=%d", c.alterer.sent.Load(), c.alterer.confirmed.Load())
	}
	if c.reassigner != nil {
		r := c.reassigner
		line += fmt.Sprintf("; reassignments sent=%d confirmed=%d cancelled=%d refused=%d", r.sent.Load(), r.confirmed.Load(), r.cancelled.Load(), r.refused.Load())
	}
	if c.churner != nil {
		line += fmt.Sprintf("; members joined=%d left=%d crashed=%d", c.churner.joined.Load(), c.churner.left.Load(), c.churner.crashed.Load())
	}
	return line
}
