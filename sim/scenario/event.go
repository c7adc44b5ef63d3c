package scenario

import (
	"fmt"
	"time"
)

// Kind is a kind of fault: one event of the schedule.
type Kind string

// The fault kinds. Each names what it does to its target; the ones with a
// window (For) undo themselves when it ends, and every one is undone at the
// start of the liveness phase.
const (
	// KindCrash kills a node's machine (its disk keeps only what was
	// synced, torn writes included) and restarts it after For; For 0
	// leaves it down until the liveness phase.
	KindCrash Kind = "crash"
	// KindPowerLoss crashes every node at once, then restarts them after
	// For, each a further random delay up to Stagger later.
	KindPowerLoss Kind = "power-loss"
	// KindPause freezes a node's process for For (SIGSTOP, a long GC):
	// nothing it owns runs, what it is sent waits, its timers fire late.
	KindPause Kind = "pause"
	// KindIsolate cuts a node off from every other host, clients too.
	KindIsolate Kind = "isolate"
	// KindCutFrom stops what a node sends to the other nodes (one way);
	// KindCutTo stops what they send to it.
	KindCutFrom Kind = "cut-from"
	KindCutTo   Kind = "cut-to"
	// KindBridge splits the other nodes in two halves that only the
	// target still joins.
	KindBridge Kind = "bridge"
	// KindMinority cuts the target and the nodes after it, a minority,
	// from the majority; clients still reach both sides.
	KindMinority Kind = "minority"
	// KindPartition cuts the nodes of its two sides from each other;
	// a node on neither side still reaches both (a partial partition),
	// and clients reach every node.
	KindPartition Kind = "partition"
	// KindHeal ends every network fault in force at once, before its
	// window ends: partitions, cuts, isolations, strands.
	KindHeal Kind = "heal"
	// KindReset breaks every connection of a node, as a middlebox's RST
	// would; aimed at "any", it breaks one connection of the network.
	KindReset Kind = "reset"
	// KindClockJump steps a node's wall clock By (NTP, a VM resume).
	KindClockJump Kind = "clock-jump"
	// KindClockDrift runs a node's clock at Rate for For.
	KindClockDrift Kind = "clock-drift"
	// KindSlowDisk makes a node's syncs take SyncMin to SyncMax for For.
	KindSlowDisk Kind = "slow-disk"
	// KindSlowNet delays every segment to and from a node by LatencyMin
	// to LatencyMax, in place of the network's own latency, for For: a
	// congested switch port, a saturated link. Nothing is lost and TCP
	// keeps each direction in order, but requests arrive after their
	// clients gave up and tried elsewhere, and answers after the node has
	// moved on. A heal ends it, as it ends the cuts.
	KindSlowNet Kind = "slow-net"
	// KindFullDisk fills a node's disk for For: writes past a little
	// headroom fail with ENOSPC.
	KindFullDisk Kind = "full-disk"
	// KindFailFsync fails a node's next fsync; the node halts (what the
	// fsync covered may be gone) and restarts after Timeouts.Restart.
	KindFailFsync Kind = "fail-fsync"
	// KindClientCrash crashes a client's machine and restarts it after
	// For.
	KindClientCrash Kind = "client-crash"
	// KindClientPause freezes a client's process for For: a consumer
	// paused past its session comes back a zombie, committing in a
	// generation its group has left behind.
	KindClientPause Kind = "client-pause"
	// KindStrand cuts a node off from every other node, both ways, while
	// every client still reaches it: a broken switch port between the
	// brokers, or a firewall rule on the replication listener only. The
	// node still believes it leads its partitions and coordinates its
	// groups, and learns otherwise only from the metadata log it cannot
	// reach, while the controller fences it and elects new leaders.
	KindStrand Kind = "strand"
	// KindShutdown stops a node gracefully, as SIGTERM stops Kafka: a
	// controlled shutdown moves its leaderships away while it still
	// serves, then it syncs and stops; it starts again For after it
	// stopped. A rolling restart is a round of these.
	KindShutdown Kind = "shutdown"
	// KindIdle does nothing. It holds the place of a fault the shrinker
	// dropped: the nemesis schedules every event of the schedule when the
	// safety phase starts, each taking a tie-break draw from the kernel,
	// so removing one outright would shift the draws of everything
	// scheduled after it and replay a different run from the start. An
	// idle slot keeps the run identical up to the moment the fault would
	// have struck, which is what lets a race shrink. Never drawn; it may
	// lie past the safety phase, where the shrinker shortened it.
	KindIdle Kind = "idle"
)

// kindInfo says what an event of a kind is made of.
type kindInfo struct {
	kind Kind
	// target is what it aims at.
	target targetKind
	// window: the event may last For; windowRequired: it must.
	window, windowRequired bool
	// drawn kinds have a rate in the swarm.
	drawn bool
	// network kinds cut links; process kinds stop nodes.
	network bool
}

type targetKind uint8

const (
	targetNone targetKind = iota
	targetNode
	targetSides
	targetClient
)

// kinds lists every kind, in the order rates are written.
var kinds = []kindInfo{
	{kind: KindCrash, target: targetNode, window: true, drawn: true},
	{kind: KindPowerLoss, target: targetNone, window: true, drawn: true},
	{kind: KindPause, target: targetNode, window: true, windowRequired: true, drawn: true},
	{kind: KindIsolate, target: targetNode, window: true, drawn: true, network: true},
	{kind: KindCutFrom, target: targetNode, window: true, drawn: true, network: true},
	{kind: KindCutTo, target: targetNode, window: true, drawn: true, network: true},
	{kind: KindBridge, target: targetNode, window: true, drawn: true, network: true},
	{kind: KindMinority, target: targetNode, window: true, drawn: true, network: true},
	{kind: KindReset, target: targetNode, drawn: true},
	{kind: KindClockJump, target: targetNode, drawn: true},
	{kind: KindClockDrift, target: targetNode, window: true, windowRequired: true, drawn: true},
	{kind: KindSlowDisk, target: targetNode, window: true, windowRequired: true, drawn: true},
	{kind: KindFullDisk, target: targetNode, window: true, windowRequired: true, drawn: true},
	{kind: KindFailFsync, target: targetNode, drawn: true},
	{kind: KindClientCrash, target: targetClient, window: true, drawn: true},
	{kind: KindClientPause, target: targetClient, window: true, windowRequired: true, drawn: true},
	// Last, though a network kind: rates are written in this order and
	// drawn in it (kindDraws), so a kind added at the end changed no
	// older seed's draw.
	{kind: KindStrand, target: targetNode, window: true, drawn: true, network: true},
	// Last for the same reason: scenario files had them from the start,
	// the swarm only later.
	{kind: KindPartition, target: targetSides, window: true, drawn: true, network: true},
	{kind: KindHeal, target: targetNone, drawn: true},
	// Last too, and drawn from a stream of its own (Draw), so that the
	// seeds that do not draw it kept their runs.
	{kind: KindSlowNet, target: targetNode, window: true, windowRequired: true, drawn: true, network: true},
	// Last, from a stream of its own likewise.
	{kind: KindShutdown, target: targetNode, window: true, drawn: true},
	{kind: KindIdle, target: targetNone},
}

// Kinds lists every fault kind, in a stable order; an idle slot is none.
func Kinds() []Kind {
	all := make([]Kind, 0, len(kinds))
	for _, k := range kinds {
		if k.kind != KindIdle {
			all = append(all, k.kind)
		}
	}
	return all
}

// DrawnKinds lists the kinds the swarm draws rates for.
func DrawnKinds() []Kind {
	var drawn []Kind
	for _, k := range kinds {
		if k.drawn {
			drawn = append(drawn, k.kind)
		}
	}
	return drawn
}

func infoOf(kind Kind) (kindInfo, bool) {
	for _, k := range kinds {
		if k.kind == kind {
			return k, true
		}
	}
	return kindInfo{}, false
}

// IsNetwork reports whether the kind cuts network links.
func (k Kind) IsNetwork() bool {
	info, _ := infoOf(k)
	return info.network
}

// kindOrder is a kind's place in kinds, for sorting.
func kindOrder(kind Kind) int {
	for i, k := range kinds {
		if k.kind == kind {
			return i
		}
	}
	return len(kinds)
}

// Event is one fault of the schedule: what happens, when, and to whom.
type Event struct {
	At   time.Duration
	Kind Kind
	// Target is the node the event aims at (node kinds).
	Target Target
	// Sides are the two groups of node ids a partition cuts apart.
	Sides [2][]int
	// Client is the client a client crash aims at; "any" picks one at
	// run time.
	Client string
	// For is how long the fault lasts; zero for instant kinds, and for
	// a crash or a network fault that lasts until a heal.
	For time.Duration
	// Stagger spreads a power loss's restarts (see KindPowerLoss).
	Stagger time.Duration
	// By is a clock jump's step, forward or back.
	By time.Duration
	// Rate is a clock drift's rate.
	Rate float64
	// SyncMin and SyncMax bound a slow disk's sync latency.
	SyncMin, SyncMax time.Duration
	// LatencyMin and LatencyMax bound a slow network's one-way latency.
	LatencyMin, LatencyMax time.Duration
}

// TargetRole says how an event's node is chosen.
type TargetRole string

// The ways to name a node.
const (
	// RoleNode is one node by id.
	RoleNode TargetRole = "node"
	// RoleLeader is the node leading a partition when the event fires.
	RoleLeader TargetRole = "leader"
	// RoleController is the active controller (the metadata quorum's
	// leader) when the event fires.
	RoleController TargetRole = "controller"
	// RoleAny is a node drawn when the event fires.
	RoleAny TargetRole = "any"
	// RoleCoordinator is the coordinator of the scenario's first group
	// (the leader of its __consumer_offsets partition) when the event
	// fires: a fault there meets the members' joins, commits and offset
	// fetches.
	RoleCoordinator TargetRole = "coordinator"
)

// Target is the node an event aims at.
type Target struct {
	Role TargetRole
	// Node is the node id for RoleNode.
	Node int
	// Topic and Partition name the partition for RoleLeader.
	Topic     string
	Partition int32
}

// String writes the target as the text format does: "n2",
// "leader orders-0", "controller", "coordinator", "any".
func (t Target) String() string {
	switch t.Role {
	case RoleNode:
		return NodeName(t.Node)
	case RoleLeader:
		return fmt.Sprintf("leader %s-%d", t.Topic, t.Partition)
	default:
		return string(t.Role)
	}
}

// NodeTarget aims at node id.
func NodeTarget(id int) Target { return Target{Role: RoleNode, Node: id} }

// OffsetsTopicName is Kafka's internal topic of committed offsets: an
// event may aim at the leader of one of its partitions, a group's
// coordinator.
const OffsetsTopicName = "__consumer_offsets"

// LeaderTarget aims at a partition's leader.
func LeaderTarget(topic string, partition int32) Target {
	return Target{Role: RoleLeader, Topic: topic, Partition: partition}
}
