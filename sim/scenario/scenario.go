package scenario

import (
	"fmt"
	"slices"
	"time"
)

// WorkloadCluster is the workload a scenario describes by default. A file
// may name another workload (`workload broker`): then it only replays a
// seed of that workload, with canaries, and says what to expect.
const WorkloadCluster = "cluster"

// Scenario is everything one run needs. Its zero value is not valid: make
// one with Draw or Parse.
type Scenario struct {
	// Workload is the simulator workload that runs the scenario:
	// WorkloadCluster unless a file names another, whose own seed then
	// decides everything (only Seed, Canaries and Expect apply).
	Workload string
	// Seed drives every random choice the scenario leaves open: network
	// latencies, which node "any" means, the kernel's tie-breaks.
	Seed uint64

	Cluster  Cluster
	Topics   []Topic
	Clients  Clients
	Timeouts Timeouts
	Network  Network
	Disk     Disk
	Logs     Logs
	// ClockRates is each node's clock rate, by node index (node n1 is
	// index 0): 1.0 is true time, 1.02 runs 2% fast. Drift is legitimate
	// in production too, so it lasts the whole run.
	ClockRates []float64
	Buggify    Buggify

	// Rates are the mean intervals of the swarm's fault kinds: the
	// schedule is drawn from them. A kind not listed is off.
	Rates []Rate
	// Faults shape the events drawn from Rates.
	Faults FaultShape
	// Schedule is the fault schedule, in time order: every fault the run
	// injects.
	Schedule []Event

	// Safety is how long clients run under faults; the liveness phase
	// follows and must converge within Liveness.
	Safety   time.Duration
	Liveness time.Duration
	// Operations is the fewest client operations the safety phase waits
	// for: a run whose faults kept its clients waiting on timeouts runs
	// on past Safety, with no new faults, until its clients have invoked
	// that many (or OperationsWaitMax passes). The swarm asks for the
	// default scenario's floor; 0, a file's default, waits for nothing.
	Operations int
	// Profile names the swarm profile a seed's draw was leaned toward
	// (the cluster workload's: the lean of one canary's runs), empty for
	// none. It says where the scenario came from; what the profile
	// changed is in the other fields, so a file replays without it.
	Profile string

	// Canaries are planted bugs switched on, on top of the command line's.
	Canaries []string
	// Expect is the outcome a scenario file promises.
	Expect Expect
}

// Cluster is the nodes: each is a broker and a voter of the metadata
// quorum (process.roles=broker,controller).
type Cluster struct {
	Nodes int
	// OffsetsPartitions is offsets.topic.num.partitions.
	OffsetsPartitions int
	// MetadataSnapshotEvery makes every node snapshot its metadata after
	// this many committed records and move its metadata log's start up
	// to the snapshot, so that a node that falls behind catches up from a
	// snapshot (FetchSnapshot) instead of the log. Zero keeps the
	// broker's default, which a run of seconds never reaches.
	MetadataSnapshotEvery int
	// LeaderRebalanceEvery, when set, is every node's
	// leader.imbalance.check.interval: the active controller moves
	// leaders back to their partitions' preferred replicas that often
	// (auto.leader.rebalance.enable). Zero: off, as it would never run
	// at Kafka's 300 s within a run. On the `nodes` line, so a file that
	// names its cluster says whether it rebalances.
	LeaderRebalanceEvery time.Duration
}

// Topic is one topic the run creates with CreateTopics before the clients
// start.
type Topic struct {
	Name        string
	Partitions  int
	Replication int
	// MinInsync is min.insync.replicas.
	MinInsync int
	// PageCache acknowledges from the page cache (flush.messages at
	// Kafka's default) instead of after fsync (Sluice's default,
	// flush.messages=1).
	PageCache bool
	// Unclean is unclean.leader.election.enable.
	Unclean bool
	// GrowTo, when set, is the partition count an operator raises the
	// topic to at GrowAt in the safety phase (CreatePartitions), while
	// the clients write and read and the faults go on: the new
	// partitions must be created, led and replicated like the first, the
	// producers that write every partition start on them, and the
	// group's leader must notice them and rebalance so that they are
	// consumed too. Zero: the topic keeps Partitions.
	GrowTo int
	GrowAt time.Duration
	// DeleteEvery, when set, has an operator delete the records a group
	// has consumed every DeleteEvery in the safety phase: DeleteRecords
	// up to the group's committed offset of one of the topic's
	// partitions, sent to its leader. Deleted records must stay deleted:
	// no read after the answer may return one. Only a topic a group
	// reads has records to delete. Zero: nothing is deleted this way.
	DeleteEvery time.Duration
	// RecreateEvery, when set, has an operator delete the topic and
	// create it again under the same name every RecreateEvery in the
	// safety phase (DeleteTopics, then CreateTopics), writing a record to
	// each partition of each incarnation in between. A topic created
	// again is a new topic: it must never hold a record acknowledged to
	// an earlier one, whatever crashes the deletion met, and it must keep
	// the records acknowledged to it. Such a topic is the operator's
	// alone: no client reads or writes it. Zero: it lives for the whole
	// run.
	RecreateEvery time.Duration
	// AlterEvery, when set, has an operator change the topic's configs
	// every AlterEvery in the safety phase (IncrementalAlterConfigs), as
	// operators do while a cluster is in trouble: it turns
	// unclean.leader.election.enable on, to bring back a partition whose
	// in-sync replicas are all down, and off again once it is back, or
	// sets min.insync.replicas anew. Each change must reach every broker
	// through the metadata log, whatever faults it meets, and an unclean
	// election it allowed must leave every replica agreeing once the
	// guarantee is restored. Zero: the configs stay as created.
	AlterEvery time.Duration
	// ElectEvery, when set, has an operator run leader elections for
	// the topic's partitions every ElectEvery in the safety phase
	// (ElectLeaders, as kafka-leader-election.sh): mostly preferred, to
	// move leadership back to each partition's first replica, sometimes
	// unclean, to give a leaderless partition a leader from outside its
	// ISR. A preferred election must never elect a replica that lacks a
	// committed record; an unclean one may, and loss is permitted where
	// it did. Zero: leaders change only as the cluster decides.
	ElectEvery time.Duration
	// ReassignEvery, when set, has an operator reassign one of the
	// topic's partitions every ReassignEvery in the safety phase
	// (AlterPartitionReassignments, as kafka-reassign-partitions.sh): to
	// a random set of as many nodes, or, sometimes, cancelling the one in
	// progress. No acknowledged write may be lost on the way, and once
	// the cluster has converged every reassignment must have completed,
	// to the last target confirmed. Zero: replicas stay where created.
	ReassignEvery time.Duration
}

// repeatingAction is one of a topic's operator actions that recur at an
// interval (zero: never), under the name scenario files and result lines
// give it.
type repeatingAction struct {
	name  string
	every *time.Duration
}

// repeatingActions lists the topic's recurring actions in the order files
// and result lines write them: the one list the parser, the file format
// and the result line read, so a new action is added once.
func (t *Topic) repeatingActions() []repeatingAction {
	return []repeatingAction{
		{"delete-every", &t.DeleteEvery},
		{"recreate-every", &t.RecreateEvery},
		{"alter-every", &t.AlterEvery},
		{"elect-every", &t.ElectEvery},
		{"reassign-every", &t.ReassignEvery},
	}
}

// Recreated reports whether an operator deletes the topic and creates it
// again during the run.
func (t Topic) Recreated() bool { return t.RecreateEvery != 0 }

// FinalPartitions is how many partitions the topic has once the run has
// grown it.
func (t Topic) FinalPartitions() int { return max(t.Partitions, t.GrowTo) }

// Clients are the simulated Kafka clients, each on a machine of its own.
type Clients struct {
	Producers []Producer
	Readers   []Reader
	Groups    []Group
}

// Uses reports whether any client reads or writes the topic.
func (c Clients) Uses(topic string) bool {
	for _, p := range c.Producers {
		if p.Topic == topic {
			return true
		}
	}
	for _, r := range c.Readers {
		if r.Topic == topic {
			return true
		}
	}
	for _, g := range c.Groups {
		if g.Topic == topic {
			return true
		}
	}
	return false
}

// Producer sends unique values to its partitions, one in flight per
// partition, pausing up to Timeouts.Think between sends.
type Producer struct {
	Name  string
	Topic string
	// Partitions are the partitions it writes, ascending; every
	// partition of the topic when empty.
	Partitions []int32
	// Acks is -1 (acks=all) or 1.
	Acks       int16
	Idempotent bool
	// Linger is linger.ms: the producer holds a send this long so that
	// sends to the same broker go out in one Produce, one batch per
	// partition, as real clients do. Zero: every send is a Produce of
	// its own.
	Linger time.Duration
	// BatchMax is how many records one send may carry: each send is one
	// batch of 1 to BatchMax records (drawn), as a client's batch of
	// records bound for one partition. Zero or one: a record per batch.
	BatchMax int
	// Compression is compression.type as a batch codec (core/batch's
	// Compression constants): every batch goes compressed with it.
	Compression int
	// InFlight is how many sends one partition may have in flight at
	// once (max.in.flight.requests.per.connection), 1 to 5 and more than
	// one only when idempotent: the producer keeps as many going, and its
	// retries lean on the broker's window of five batches. Zero or one:
	// one.
	InFlight int
}

// Reader polls its partitions from the start (a consumer by assignment).
type Reader struct {
	Name       string
	Topic      string
	Partitions []int32 // every partition when empty
}

// Group is a consumer group on one topic: Members consumers, named
// <group>-c1, <group>-c2, ..., each committing what it polled.
type Group struct {
	Name    string
	Topic   string
	Members int
	// OffsetReaders are lag monitors, named <group>-o1, ..., outside the
	// group: each reads every committed offset of the group now and then
	// (OffsetFetch, as an admin client's ListConsumerGroupOffsets),
	// asking the coordinator it last found until that one fails it. A
	// member reads back only its own partitions and finds its
	// coordinator afresh whenever a commit fails, so only a monitor
	// keeps asking a coordinator its peers have replaced.
	OffsetReaders int
	// Static makes every member a static member (KIP-345): its
	// group.instance.id is its client name, so a member that crashes
	// and restarts rejoins as the same instance, keeping its partitions
	// without a rebalance, and a zombie of it is fenced
	// (FENCED_INSTANCE_ID) rather than told to rejoin.
	Static bool
	// Balancer is how the members rebalance (BalancerEager, the zero
	// value, BalancerCooperative or BalancerUpgrade).
	Balancer Balancer
}

// Balancer is how a group's members rebalance, which is what the
// assignors they offer decide (partition.assignment.strategy).
type Balancer string

const (
	// BalancerEager members offer range and roundrobin (every other
	// member preferring roundrobin): each gives up every partition
	// before it rejoins.
	BalancerEager Balancer = ""
	// BalancerCooperative members offer cooperative-sticky alone
	// (KIP-429, franz-go's default and the Java consumer's since 3.0):
	// they read what they keep while the group rebalances, and a
	// partition moves in two rebalances.
	BalancerCooperative Balancer = "cooperative"
	// BalancerUpgrade is the first step of Kafka's upgrade to it: odd
	// members offer cooperative-sticky and range, so they rebalance
	// eagerly with the cooperative-sticky assignor the group picks, and
	// even ones cooperative-sticky alone, cooperatively.
	BalancerUpgrade Balancer = "upgrade"
)

// Balancers lists the balancers a group may have, by name.
func Balancers() []Balancer { return []Balancer{BalancerCooperative, BalancerUpgrade} }

// MemberName is the client name of a group's member i (from 1).
func (g Group) MemberName(i int) string { return fmt.Sprintf("%s-c%d", g.Name, i) }

// OffsetReaderName is the client name of a group's offset reader i (from
// 1).
func (g Group) OffsetReaderName(i int) string { return fmt.Sprintf("%s-o%d", g.Name, i) }

// Timeouts are the protocol's clocks, short so a seed runs fast. Each names
// the Kafka setting it stands for.
type Timeouts struct {
	// Election is controller.quorum.election.timeout.ms and QuorumFetch
	// controller.quorum.fetch.timeout.ms.
	Election    time.Duration
	QuorumFetch time.Duration
	// BrokerSession is broker.session.timeout.ms and BrokerHeartbeat
	// broker.heartbeat.interval.ms.
	BrokerSession   time.Duration
	BrokerHeartbeat time.Duration
	// ReplicaLag is replica.lag.time.max.ms and ReplicaFetchWait
	// replica.fetch.wait.max.ms.
	ReplicaLag       time.Duration
	ReplicaFetchWait time.Duration
	// GroupSession is the consumers' session.timeout.ms, GroupRebalance
	// their max.poll.interval.ms, GroupInitialDelay the coordinator's
	// group.initial.rebalance.delay.ms.
	GroupSession      time.Duration
	GroupRebalance    time.Duration
	GroupInitialDelay time.Duration
	// Request is the clients' request.timeout.ms, Delivery the
	// producers' delivery.timeout.ms, ProduceWait the Produce request's
	// timeout, FetchWait the consumers' fetch.max.wait.ms.
	Request     time.Duration
	Delivery    time.Duration
	ProduceWait time.Duration
	FetchWait   time.Duration
	// Think bounds a producer's pause between two sends to a partition.
	Think time.Duration
	// Restart is how long a node that halted itself (after a failed
	// fsync) stays down.
	Restart time.Duration
}

// Network is the network's continuous conditions.
type Network struct {
	LatencyMin, LatencyMax time.Duration
}

// Disk is every node's disk, when no fault event changes it.
type Disk struct {
	SyncLatencyMin, SyncLatencyMax time.Duration
	// TornWrite, ReadCorruption and SyncFailure are simdisk's chances
	// (see simdisk.Faults).
	TornWrite      float64
	ReadCorruption float64
	SyncFailure    float64
}

// Logs are log settings a run may shrink far below the broker's defaults,
// so that what a production cluster does over hours (roll segments,
// compact __consumer_offsets, expire idle producers) happens within a run
// of seconds. Zero keeps the broker's default.
type Logs struct {
	// SegmentBytes is segment.bytes of every topic the run creates.
	SegmentBytes int
	// OffsetsSegmentBytes is offsets.topic.segment.bytes. The compacted
	// __consumer_offsets is cleaned only below its active segment, so
	// only small segments make a run compact it.
	OffsetsSegmentBytes int
	// RetentionCheck is log.retention.check.interval.ms: how often every
	// broker runs retention, a step of compaction and the expiry of idle
	// producers (default 5 minutes).
	RetentionCheck time.Duration
	// RetentionBytes is retention.bytes of every topic the run creates:
	// each replica deletes its oldest segments below the high watermark
	// while the rest still hold this much (default unlimited), so the
	// log start moves within a run.
	RetentionBytes int
}

// Buggify are the chances of core's BUGGIFY sites: each site is enabled
// for the run with probability Enable, then fires with probability Fire
// each time it is reached. Zero switches them off.
type Buggify struct {
	Enable, Fire float64
}

// Rate is how often the swarm injects one kind of fault: a Poisson process
// of mean interval Mean over the safety phase.
type Rate struct {
	Kind Kind
	Mean time.Duration
}

// FaultShape shapes the events drawn from the rates.
type FaultShape struct {
	// WindowMin and WindowMax bound how long a fault lasts: a node stays
	// down or paused, a partition or a slow disk lasts.
	WindowMin, WindowMax time.Duration
	// LeaderBias is the chance that a fault aimed at one node aims at a
	// partition's leader or the controller instead of any node.
	LeaderBias float64
}

// Expect is what a scenario file says its run must end with.
type Expect struct {
	// Fail is set when the run must fail: a canary scenario, or a
	// regression kept to show a bug is still there.
	Fail bool
	// Check, when set with Fail, is the check that must fail.
	Check string
}

// NodeName is the host name of node id (from 1): n1, n2, ...
func NodeName(id int) string {
	if id >= 0 && id <= nodesMax {
		return nodeNames[id]
	}
	return fmt.Sprintf("n%d", id)
}

// nodeNames are NodeName's answers for the ids a scenario may have, made
// once: a run asks for a node's name on every admin request and fault.
var nodeNames = func() (names [nodesMax + 1]string) {
	for id := range names {
		names[id] = fmt.Sprintf("n%d", id)
	}
	return names
}()

// Topic finds a topic by name.
func (s Scenario) Topic(name string) (Topic, bool) {
	for _, t := range s.Topics {
		if t.Name == name {
			return t, true
		}
	}
	return Topic{}, false
}

// PartitionsOf returns a client's partitions: the ones it lists, or every
// partition of its topic.
func (s Scenario) PartitionsOf(topic string, listed []int32) []int32 {
	if len(listed) > 0 {
		return slices.Clone(listed)
	}
	t, _ := s.Topic(topic)
	all := make([]int32, t.Partitions)
	for i := range all {
		all[i] = int32(i)
	}
	return all
}

// Lanes counts the producers' lanes: each producer sends to each of its
// partitions in turn, one send out at a time.
func (s Scenario) Lanes() int {
	lanes := 0
	for _, p := range s.Clients.Producers {
		lanes += len(s.PartitionsOf(p.Topic, p.Partitions))
	}
	return lanes
}

// ClientNames lists every client's name: producers, readers, then every
// group's members.
func (s Scenario) ClientNames() []string {
	var names []string
	for _, p := range s.Clients.Producers {
		names = append(names, p.Name)
	}
	for _, r := range s.Clients.Readers {
		names = append(names, r.Name)
	}
	for _, g := range s.Clients.Groups {
		for i := 1; i <= g.Members; i++ {
			names = append(names, g.MemberName(i))
		}
		for i := 1; i <= g.OffsetReaders; i++ {
			names = append(names, g.OffsetReaderName(i))
		}
	}
	return names
}

// Rate returns the mean interval of a kind, zero when it is off.
func (s Scenario) Rate(kind Kind) time.Duration {
	for _, r := range s.Rates {
		if r.Kind == kind {
			return r.Mean
		}
	}
	return 0
}

// Has reports whether the schedule holds an event of the kind.
func (s Scenario) Has(kind Kind) bool {
	for _, e := range s.Schedule {
		if e.Kind == kind {
			return true
		}
	}
	return false
}
