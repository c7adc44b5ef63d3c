package group

import (
	"cmp"
	"fmt"
	"slices"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"sluice/core"
)

// consumerProtocolType is the protocol type of Kafka consumers, whose
// member metadata the coordinator can read to learn the group's
// subscribed topics (for OffsetDelete and offset expiry, as Kafka does).
const consumerProtocolType = "consumer"

// topicPartition names a partition whose offset a group commits.
type topicPartition struct {
	topic     string
	partition int32
}

func compareTopicPartitions(a, b topicPartition) int {
	if c := cmp.Compare(a.topic, b.topic); c != 0 {
		return c
	}
	return cmp.Compare(a.partition, b.partition)
}

// committedOffset is one committed offset, as OffsetCommitValue holds it.
type committedOffset struct {
	offset      int64
	leaderEpoch int32
	metadata    string
	// commitTimestamp is the coordinator's wall clock at the commit, in
	// milliseconds; retention counts from it for groups without members.
	commitTimestamp int64
	// expireTimestamp, when not 0, is when the offset expires in place of
	// offsets.retention.minutes: an OffsetCommit v2-v4 asked for its own
	// retention time (expireAt).
	expireTimestamp int64
}

// group is one consumer group: its membership and generation, and the
// offsets it committed.
type group struct {
	id        string
	partition *partitionState

	state state
	// stateTimestamp is the wall-clock time (ms) of the last state
	// change, persisted as currentStateTimestamp: retention of an empty
	// group's offsets counts from it. -1 when unknown.
	stateTimestamp int64

	// protocolType is what every member joined with ("consumer" for
	// consumers); empty for a group only used to store offsets.
	protocolType string
	// protocolName is the protocol chosen for the current generation;
	// empty when the generation has no members.
	protocolName string
	generation   int32
	// leaderID is the member that computes assignments; empty if none.
	leaderID string

	// members in the order they joined; byID indexes them.
	members []*member
	byID    map[string]*member
	// staticMembers maps each group.instance.id to its current member id.
	staticMembers map[string]string
	// pendingMembers are member ids handed out with MEMBER_ID_REQUIRED and
	// not yet used, each with the timer that forgets it.
	pendingMembers map[string]core.Timer
	// pendingSync are the members of the current generation that have
	// not yet sent SyncGroup.
	pendingSync map[string]bool
	// awaitingJoinCount counts members with a parked JoinGroup.
	awaitingJoinCount int
	// supportedProtocols counts, per protocol name, the members that
	// support it; a protocol every member supports has len(members).
	supportedProtocols map[string]int
	// subscribedTopics are the topics the consumers of this generation
	// subscribe to; nil when unknown (not a consumer group, or metadata
	// that does not parse).
	subscribedTopics map[string]bool

	// newMemberAdded is set when a member joins during the first
	// rebalance: the initial rebalance delay then waits once more.
	newMemberAdded bool
	// joinTimer completes the rebalance (Kafka's DelayedJoin), or
	// re-checks it after the initial delay when joinInitial is set.
	joinTimer             core.Timer
	joinInitial           bool
	initialDelay          time.Duration
	initialDelayRemaining time.Duration
	// syncTimer removes members that do not send SyncGroup in time.
	syncTimer core.Timer
	// writingAssignment is set while the leader's assignment for
	// generation writingGeneration is being written. A leader whose
	// SyncGroup answer was lost sends it again, perhaps with another
	// assignment; writing that one too would leave the log ending with an
	// assignment nobody was handed, which is what a reloaded group would
	// believe (regression cluster-group-liveness-229681). The retry waits
	// for the first write instead, as every member's sync does.
	writingAssignment bool
	writingGeneration int32

	// offsets are the group's committed offsets, exactly as the log's
	// committed records say.
	offsets map[topicPartition]committedOffset
	// pendingCommits counts, per partition, commits written but not yet
	// committed: expiry leaves such offsets alone, and a deletion
	// tombstones them too.
	pendingCommits map[topicPartition]int
}

func newGroup(id string, partition *partitionState, s state, now int64) *group {
	return &group{
		id:                 id,
		partition:          partition,
		state:              s,
		stateTimestamp:     now,
		byID:               map[string]*member{},
		staticMembers:      map[string]string{},
		pendingMembers:     map[string]core.Timer{},
		pendingSync:        map[string]bool{},
		supportedProtocols: map[string]int{},
		offsets:            map[topicPartition]committedOffset{},
		pendingCommits:     map[topicPartition]int{},
	}
}

// transition moves the group to another state, which must be one the
// protocol allows from where it is.
func (g *group) transition(to state, now int64) {
	if !canMoveTo(g.state, to) {
		panic(fmt.Sprintf("group: %s cannot move from %s to %s", g.id, g.state, to))
	}
	g.state = to
	g.stateTimestamp = now
}

// is reports whether the group is in state s.
func (g *group) is(s state) bool { return g.state == s }

// canRebalance reports whether a rebalance may start from here.
func (g *group) canRebalance() bool { return canMoveTo(g.state, statePreparingRebalance) }

func (g *group) has(memberID string) bool { return g.byID[memberID] != nil }

func (g *group) isLeader(memberID string) bool { return g.leaderID != "" && g.leaderID == memberID }

func (g *group) isPending(memberID string) bool {
	_, pending := g.pendingMembers[memberID]
	return pending
}

// currentStaticMemberID is the member id an instance id maps to.
func (g *group) currentStaticMemberID(instanceID string) (string, bool) {
	id, ok := g.staticMembers[instanceID]
	return id, ok
}

// add makes m a member; joinDone is its parked JoinGroup, if any.
func (g *group) add(m *member, joinDone func(*kmsg.JoinGroupResponse)) {
	if g.has(m.id) {
		panic(fmt.Sprintf("group: %s already has member %s", g.id, m.id))
	}
	if len(g.members) == 0 {
		g.protocolType = m.protocolType
	}
	if g.protocolType != m.protocolType || !g.supportsProtocols(m.protocolType, m.protocols) {
		panic(fmt.Sprintf("group: member %s of %s added with protocols the group does not support", m.id, g.id))
	}
	if m.instanceID != nil {
		g.staticMembers[*m.instanceID] = m.id
	}
	if g.leaderID == "" {
		g.leaderID = m.id
	}
	g.members = append(g.members, m)
	g.byID[m.id] = m
	g.countProtocols(m, 1)
	m.joinDone = joinDone
	if m.awaitingJoin() {
		g.awaitingJoinCount++
	}
	g.forgetPendingMember(m.id)
}

// remove drops a member (or a pending member id), keeping every count and
// index right; if it led the group, the next member in join order leads.
func (g *group) remove(memberID string) {
	g.forgetPendingMember(memberID)
	delete(g.pendingSync, memberID)
	m := g.byID[memberID]
	if m == nil {
		return
	}
	m.stopSessionTimer()
	delete(g.byID, memberID)
	g.members = slices.DeleteFunc(g.members, func(other *member) bool { return other == m })
	g.countProtocols(m, -1)
	if m.awaitingJoin() {
		g.awaitingJoinCount--
	}
	if m.instanceID != nil && g.staticMembers[*m.instanceID] == memberID {
		delete(g.staticMembers, *m.instanceID)
	}
	if g.isLeader(memberID) {
		g.leaderID = ""
		if len(g.members) > 0 {
			g.leaderID = g.members[0].id
		}
	}
	if g.awaitingJoinCount < 0 || g.awaitingJoinCount > len(g.members) {
		panic(fmt.Sprintf("group: %s counts %d members awaiting join of %d", g.id, g.awaitingJoinCount, len(g.members)))
	}
}

// forgetPendingMember drops a pending member id and its timer.
func (g *group) forgetPendingMember(memberID string) {
	if timer, pending := g.pendingMembers[memberID]; pending {
		if timer != nil {
			timer.Stop()
		}
		delete(g.pendingMembers, memberID)
	}
}

// countProtocols adds delta to the count of each protocol m supports.
func (g *group) countProtocols(m *member, delta int) {
	for _, p := range m.protocols {
		g.supportedProtocols[p.name] += delta
		if g.supportedProtocols[p.name] == 0 {
			delete(g.supportedProtocols, p.name)
		}
	}
}

// setJoinDone parks (or, with nil, clears) a member's JoinGroup, keeping
// the count of members awaiting join right.
func (g *group) setJoinDone(m *member, joinDone func(*kmsg.JoinGroupResponse)) {
	if m.awaitingJoin() {
		g.awaitingJoinCount--
	}
	m.joinDone = joinDone
	if m.awaitingJoin() {
		g.awaitingJoinCount++
	}
}

// updateMember takes a rejoining member's new protocols and timeouts and
// parks its JoinGroup.
func (g *group) updateMember(m *member, protocols []protocol, rebalanceTimeoutMs, sessionTimeoutMs int32, joinDone func(*kmsg.JoinGroupResponse)) {
	g.countProtocols(m, -1)
	m.protocols = protocols
	g.countProtocols(m, 1)
	m.rebalanceTimeoutMs = rebalanceTimeoutMs
	m.sessionTimeoutMs = sessionTimeoutMs
	g.setJoinDone(m, joinDone)
}

// replaceStaticMember gives a static member a new member id (its instance
// restarted and joined without its old id), keeping its assignment; the
// old id is fenced from now on.
func (g *group) replaceStaticMember(instanceID, oldID, newID string) *member {
	m := g.byID[oldID]
	if m == nil {
		panic(fmt.Sprintf("group: %s has no member %s for instance %s", g.id, oldID, instanceID))
	}
	delete(g.byID, oldID)
	m.id = newID
	g.byID[newID] = m
	g.staticMembers[instanceID] = newID
	if g.isLeader(oldID) {
		g.leaderID = newID
	}
	if g.pendingSync[oldID] {
		delete(g.pendingSync, oldID)
		g.pendingSync[newID] = true
	}
	return m
}

// supportsProtocols reports whether a member with this protocol type and
// protocols may join: an empty group takes any non-empty type and list;
// otherwise the type must match and one protocol must be one every member
// supports (with no members left mid-rebalance, any protocol is).
func (g *group) supportsProtocols(protocolType string, protocols []protocol) bool {
	if g.is(stateEmpty) {
		return protocolType != "" && len(protocols) > 0
	}
	if protocolType != g.protocolType {
		return false
	}
	for _, p := range protocols {
		if g.supportedProtocols[p.name] == len(g.members) {
			return true
		}
	}
	return false
}

// selectProtocol picks the generation's protocol as Kafka does: among the
// protocols every member supports, each member votes for its most
// preferred, and the most votes win. Kafka leaves ties to hash-map order;
// here the tie goes to the protocol whose first vote came from the
// earliest member in join order, so a seed always picks the same.
func (g *group) selectProtocol() string {
	if len(g.members) == 0 {
		panic("group: selecting a protocol for a group with no members")
	}
	candidates := map[string]bool{}
	for name, count := range g.supportedProtocols { // order-independent: builds a set
		if count == len(g.members) {
			candidates[name] = true
		}
	}
	votes := map[string]int{}
	var order []string
	for _, m := range g.members {
		choice := m.vote(candidates)
		if votes[choice] == 0 {
			order = append(order, choice)
		}
		votes[choice]++
	}
	best := order[0]
	for _, name := range order[1:] {
		if votes[name] > votes[best] {
			best = name
		}
	}
	return best
}

// rebalanceTimeout is the longest rebalance timeout of any member: how
// long a rebalance waits for everyone to rejoin.
func (g *group) rebalanceTimeout() time.Duration {
	longest := time.Duration(0)
	for _, m := range g.members {
		longest = max(longest, m.rebalanceTimeout())
	}
	return longest
}

// hasAllMembersJoined reports whether the rebalance can complete early:
// every member rejoined and no pending member id is outstanding.
func (g *group) hasAllMembersJoined() bool {
	return g.awaitingJoinCount == len(g.members) && len(g.pendingMembers) == 0
}

// maybeElectNewJoinedLeader keeps the leader if it rejoined, or hands the
// leadership to a member that did. It reports false when no member rejoined.
func (g *group) maybeElectNewJoinedLeader() bool {
	if g.leaderID == "" {
		return false
	}
	if g.byID[g.leaderID].awaitingJoin() {
		return true
	}
	for _, m := range g.members {
		if m.awaitingJoin() {
			g.leaderID = m.id
			return true
		}
	}
	return false
}

// initNextGeneration starts a new generation with the members that are
// there: CompletingRebalance with a chosen protocol, or Empty.
func (g *group) initNextGeneration(now int64) {
	g.generation++
	if len(g.members) > 0 {
		g.protocolName = g.selectProtocol()
		g.transition(stateCompletingRebalance, now)
	} else {
		g.protocolName = ""
		g.transition(stateEmpty, now)
	}
	g.subscribedTopics = g.computeSubscribedTopics()
	clear(g.pendingSync)
}

// currentMemberMetadata is what the leader's JoinGroup answer lists: every
// member with its metadata for the chosen protocol, in join order.
func (g *group) currentMemberMetadata() []kmsg.JoinGroupResponseMember {
	list := make([]kmsg.JoinGroupResponseMember, 0, len(g.members))
	for _, m := range g.members {
		entry := kmsg.NewJoinGroupResponseMember()
		entry.MemberID = m.id
		entry.InstanceID = m.instanceID
		entry.ProtocolMetadata = m.metadata(g.protocolName)
		list = append(list, entry)
	}
	return list
}

// computeSubscribedTopics reads the consumers' subscriptions from their
// metadata for the chosen protocol (Kafka's ConsumerProtocol); nil if the
// group is not a consumer group or any subscription does not parse.
func (g *group) computeSubscribedTopics() map[string]bool {
	if g.protocolType != consumerProtocolType || g.protocolName == "" || len(g.members) == 0 {
		return nil
	}
	topics := map[string]bool{}
	for _, m := range g.members {
		var subscription kmsg.ConsumerMemberMetadata
		if err := subscription.ReadFrom(m.metadata(g.protocolName)); err != nil {
			return nil
		}
		for _, topic := range subscription.Topics {
			topics[topic] = true
		}
	}
	return topics
}

// isSubscribedToTopic reports whether the group may be consuming topic:
// when the subscriptions are unknown, it may.
func (g *group) isSubscribedToTopic(topic string) bool {
	return g.subscribedTopics == nil || g.subscribedTopics[topic]
}

// sortedKeys returns a map's keys in order, so that nothing the
// coordinator does depends on Go's random map order.
func sortedKeys[K cmp.Ordered, V any](m map[K]V) []K {
	keys := make([]K, 0, len(m))
	for key := range m {
		keys = append(keys, key)
	}
	slices.Sort(keys)
	return keys
}

// sortedPartitions returns offset map keys in topic, partition order.
func sortedPartitions[V any](m map[topicPartition]V) []topicPartition {
	keys := make([]topicPartition, 0, len(m))
	for key := range m {
		keys = append(keys, key)
	}
	slices.SortFunc(keys, compareTopicPartitions)
	return keys
}
