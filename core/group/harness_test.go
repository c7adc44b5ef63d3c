package group

import (
	"bytes"
	"slices"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"sluice/core"
	"sluice/core/batch"
	"sluice/core/wire"
	"sluice/sim"
	"sluice/sim/kernel"
)

// This file drives a Coordinator on a simulated machine (virtual clock,
// seeded entropy) over fakeLog, an offsets topic in memory whose appends
// commit when the test says so, or on the next turn of the loop:
//
//	tc := newTestCoordinator(t, testConfig())
//	a := tc.joinAndSync("g", "a", ...)   // a stable one-member group
//	tc.run(time.Second)                  // virtual time passes

// tester is what the harness needs of *testing.T, so that rapid's *T
// (wrapped in rapidTester) can drive it too.
type tester interface {
	Helper()
	Fatalf(format string, args ...any)
	Fatal(args ...any)
}

// fakeLog is __consumer_offsets in memory: per partition, the batches
// appended (with their offsets), the high watermark, and the appends
// waiting for it.
type fakeLog struct {
	clock      core.Clock
	partitions map[int32]*fakePartition
	// autoCommit commits every append on the next turn of the loop;
	// otherwise commit must be called.
	autoCommit bool
	// refuse, when set, refuses every append with it.
	refuse error
}

type fakePartition struct {
	batches       [][]byte
	endOffset     int64
	highWatermark int64
	waiting       []fakeAppend
}

type fakeAppend struct {
	lastOffset int64
	done       func(error)
}

func newFakeLog(clock core.Clock) *fakeLog {
	return &fakeLog{clock: clock, partitions: map[int32]*fakePartition{}, autoCommit: true}
}

func (l *fakeLog) partition(index int32) *fakePartition {
	p := l.partitions[index]
	if p == nil {
		p = &fakePartition{}
		l.partitions[index] = p
	}
	return p
}

func (l *fakeLog) Append(partition int32, records []batch.Record, done func(error)) error {
	if l.refuse != nil {
		return l.refuse
	}
	p := l.partition(partition)
	b := batch.Build(batch.Spec{BaseOffset: p.endOffset, BaseTimestamp: l.clock.Now().UnixMilli(),
		ProducerID: batch.NoProducerID, Records: records})
	p.batches = append(p.batches, b)
	p.endOffset += int64(len(records))
	p.waiting = append(p.waiting, fakeAppend{lastOffset: p.endOffset - 1, done: done})
	if l.autoCommit {
		l.clock.AfterFunc(0, func() { l.commit(partition) })
	}
	return nil
}

// commit moves the high watermark to the end and completes, in order,
// every append waiting.
func (l *fakeLog) commit(partition int32) {
	p := l.partition(partition)
	p.highWatermark = p.endOffset
	waiting := p.waiting
	p.waiting = nil
	for _, w := range waiting {
		w.done(nil)
	}
}

// fail completes every waiting append with err (leadership lost).
func (l *fakeLog) fail(partition int32, err error) {
	p := l.partition(partition)
	waiting := p.waiting
	p.waiting = nil
	for _, w := range waiting {
		w.done(err)
	}
}

// loseUncommitted drops what is above the high watermark, as a crash of
// every replica before their syncs would.
func (l *fakeLog) loseUncommitted() {
	for _, index := range sortedKeys(l.partitions) {
		p := l.partitions[index]
		for len(p.batches) > 0 {
			h, err := batch.Parse(p.batches[len(p.batches)-1])
			if err != nil || h.BaseOffset < p.highWatermark {
				break
			}
			p.batches = p.batches[:len(p.batches)-1]
		}
		p.endOffset = p.highWatermark
		p.waiting = nil
	}
}

func (l *fakeLog) Read(partition int32, offset int64, maxBytes int) (ReadResult, error) {
	p := l.partition(partition)
	result := ReadResult{LogStartOffset: 0, HighWatermark: p.highWatermark, LogEndOffset: p.endOffset}
	for _, b := range p.batches {
		h, err := batch.Parse(b)
		if err != nil {
			return result, err
		}
		if h.NextOffset() <= offset || h.LastOffset() >= p.highWatermark {
			continue
		}
		if len(result.Batches) > 0 && len(result.Batches)+len(b) > maxBytes {
			break
		}
		result.Batches = append(result.Batches, b...)
	}
	return result, nil
}

// records decodes every record appended to partition, committed or not.
func (l *fakeLog) records(t tester, partition int32) []storedRecord {
	t.Helper()
	var all []storedRecord
	for _, b := range l.partition(partition).batches {
		records, err := batch.Records(b)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range records {
			decoded, err := decodeRecord(r)
			if err != nil {
				t.Fatal(err)
			}
			all = append(all, decoded)
		}
	}
	return all
}

// testCoordinator is a coordinator on a simulated machine.
type testCoordinator struct {
	t       tester
	kernel  *kernel.Kernel
	machine *sim.Machine
	log     *fakeLog
	config  Config
	c       *Coordinator
	// topics are the topic partitions the "cluster" has.
	topics map[string]int32
}

// testConfig is the default configuration with one offsets partition, so
// every group lives in partition 0.
func testConfig() Config {
	config := DefaultConfig()
	config.OffsetsTopicPartitions = 1
	return config
}

func newTestCoordinator(t tester, config Config, canaries ...string) *testCoordinator {
	t.Helper()
	k := kernel.NewKernel(1, nil)
	tc := &testCoordinator{t: t, kernel: k, config: config, topics: map[string]int32{"orders": 3, "payments": 2}}
	tc.machine = sim.NewMachine(k, nil, "n1", sim.MachineOptions{Canaries: core.NewCanaries(canaries...)})
	tc.log = newFakeLog(tc.machine.Clock)
	tc.start()
	return tc
}

// start builds a coordinator on the machine's current process and loads
// every offsets partition.
func (tc *testCoordinator) start() {
	tc.t.Helper()
	c, err := New(tc.machine.World(), tc.config, tc.log, func(topic string, partition int32) bool {
		return partition >= 0 && partition < tc.topics[topic]
	})
	if err != nil {
		tc.t.Fatal(err)
	}
	tc.c = c
	for partition := int32(0); partition < tc.config.OffsetsTopicPartitions; partition++ {
		c.Load(partition, 0)
	}
	tc.settle()
	for partition := int32(0); partition < tc.config.OffsetsTopicPartitions; partition++ {
		if p := c.partitions[partition]; p == nil || p.loading() {
			tc.t.Fatalf("offsets partition %d did not load", partition)
		}
	}
}

// restart crashes the machine (the coordinator's memory and timers die)
// and starts a new coordinator over the same log.
func (tc *testCoordinator) restart() {
	tc.t.Helper()
	tc.machine.Crash()
	tc.machine.Restart()
	tc.start()
}

// run advances virtual time by d.
func (tc *testCoordinator) run(d time.Duration) {
	tc.kernel.RunUntil(tc.kernel.Now() + int64(d))
}

// settle runs what is due now (appends committing, loads).
func (tc *testCoordinator) settle() { tc.run(0) }

func (tc *testCoordinator) group(id string) *group {
	return tc.c.partitions[tc.c.PartitionFor(id)].groups[id]
}

// commitResponder is an OffsetCommit's answer as a wire.Responder.
func commitResponder(done func(*kmsg.OffsetCommitResponse)) wire.Responder {
	return wire.ResponderFunc(func(resp kmsg.Response) { done(resp.(*kmsg.OffsetCommitResponse)) })
}

// answer holds a response that may come later.
type answer[T any] struct {
	response T
	count    int
}

func (a *answer[T]) done(response T) {
	a.response = response
	a.count++
}

// require returns the response, failing unless exactly one came.
func (a *answer[T]) require(t tester, what string) T {
	t.Helper()
	if a.count != 1 {
		t.Fatalf("%s: answered %d times, want once", what, a.count)
	}
	return a.response
}

func (a *answer[T]) requirePending(t tester, what string) {
	t.Helper()
	if a.count != 0 {
		t.Fatalf("%s: answered, want still waiting", what)
	}
}

// joinSpec describes a JoinGroup.
type joinSpec struct {
	group      string
	memberID   string
	instanceID string // "" for a dynamic member
	clientID   string
	version    int16
	session    time.Duration
	rebalance  time.Duration
	protocols  []string // names; metadata is "meta-<name>-<clientID>"
}

func (tc *testCoordinator) join(spec joinSpec) *answer[*kmsg.JoinGroupResponse] {
	req := kmsg.NewPtrJoinGroupRequest()
	req.Version = spec.version
	if req.Version == 0 {
		req.Version = 7
	}
	req.Group = spec.group
	req.MemberID = spec.memberID
	if spec.instanceID != "" {
		req.InstanceID = &spec.instanceID
	}
	req.ProtocolType = "consumer"
	session, rebalance := spec.session, spec.rebalance
	if session == 0 {
		session = 10 * time.Second
	}
	if rebalance == 0 {
		rebalance = 30 * time.Second
	}
	req.SessionTimeoutMillis = int32(session.Milliseconds())
	req.RebalanceTimeoutMillis = int32(rebalance.Milliseconds())
	protocols := spec.protocols
	if protocols == nil {
		protocols = []string{"range"}
	}
	for _, name := range protocols {
		p := kmsg.NewJoinGroupRequestProtocol()
		p.Name = name
		p.Metadata = []byte("meta-" + name + "-" + spec.clientID)
		req.Protocols = append(req.Protocols, p)
	}
	a := &answer[*kmsg.JoinGroupResponse]{}
	tc.c.JoinGroup(req, Client{ID: spec.clientID, Host: "/10.0.0.1"}, a.done)
	return a
}

// testMember is a member as a test client sees it.
type testMember struct {
	group      string
	id         string
	instanceID string
	clientID   string
	generation int32
	leader     string
	members    []kmsg.JoinGroupResponseMember
	assignment []byte
}

// joinNew joins a new dynamic member through the MEMBER_ID_REQUIRED round
// trip and returns its parked second join.
func (tc *testCoordinator) joinNew(group, clientID string) (*testMember, *answer[*kmsg.JoinGroupResponse]) {
	tc.t.Helper()
	first := tc.join(joinSpec{group: group, clientID: clientID}).require(tc.t, "first join of "+clientID)
	requireCode(tc.t, "first join of "+clientID, first.ErrorCode, kerr.MemberIDRequired)
	if !strings.HasPrefix(first.MemberID, clientID+"-") {
		tc.t.Fatalf("member id %q does not start with the client id", first.MemberID)
	}
	m := &testMember{group: group, id: first.MemberID, clientID: clientID}
	return m, tc.join(joinSpec{group: group, clientID: clientID, memberID: m.id})
}

// joined records a successful join answer on m.
func (m *testMember) joined(t tester, resp *kmsg.JoinGroupResponse) {
	t.Helper()
	requireCode(t, "join of "+m.id, resp.ErrorCode, nil)
	if resp.MemberID != m.id && m.id != "" {
		t.Fatalf("join answered member %q, want %q", resp.MemberID, m.id)
	}
	m.id = resp.MemberID
	m.generation = resp.Generation
	m.leader = resp.LeaderID
	m.members = resp.Members
}

func (tc *testCoordinator) sync(m *testMember, assignments map[string]string) *answer[*kmsg.SyncGroupResponse] {
	req := kmsg.NewPtrSyncGroupRequest()
	req.Version = 5
	req.Group = m.group
	req.Generation = m.generation
	req.MemberID = m.id
	if m.instanceID != "" {
		req.InstanceID = &m.instanceID
	}
	for _, id := range sortedKeys(assignments) {
		a := kmsg.NewSyncGroupRequestGroupAssignment()
		a.MemberID = id
		a.MemberAssignment = []byte(assignments[id])
		req.GroupAssignment = append(req.GroupAssignment, a)
	}
	a := &answer[*kmsg.SyncGroupResponse]{}
	tc.c.SyncGroup(req, a.done)
	return a
}

// synced records a successful sync answer on m.
func (m *testMember) synced(t tester, resp *kmsg.SyncGroupResponse) {
	t.Helper()
	requireCode(t, "sync of "+m.id, resp.ErrorCode, nil)
	m.assignment = resp.MemberAssignment
}

func (tc *testCoordinator) heartbeat(m *testMember) int16 {
	req := kmsg.NewPtrHeartbeatRequest()
	req.Version = 4
	req.Group = m.group
	req.Generation = m.generation
	req.MemberID = m.id
	if m.instanceID != "" {
		req.InstanceID = &m.instanceID
	}
	return tc.c.Heartbeat(req).ErrorCode
}

// leave sends LeaveGroup v5 for the members and returns the answer.
func (tc *testCoordinator) leave(group string, members ...*testMember) *kmsg.LeaveGroupResponse {
	req := kmsg.NewPtrLeaveGroupRequest()
	req.Version = 5
	req.Group = group
	for _, m := range members {
		identity := kmsg.NewLeaveGroupRequestMember()
		identity.MemberID = m.id
		if m.instanceID != "" {
			identity.InstanceID = &m.instanceID
		}
		req.Members = append(req.Members, identity)
	}
	return tc.c.LeaveGroup(req)
}

// commit sends OffsetCommit v8 for one partition and returns its answer.
func (tc *testCoordinator) commit(group, memberID string, generation int32, topic string, partition int32, offset int64) *answer[*kmsg.OffsetCommitResponse] {
	req := kmsg.NewPtrOffsetCommitRequest()
	req.Version = 8
	req.Group = group
	req.MemberID = memberID
	req.Generation = generation
	rt := kmsg.NewOffsetCommitRequestTopic()
	rt.Topic = topic
	rp := kmsg.NewOffsetCommitRequestTopicPartition()
	rp.Partition = partition
	rp.Offset = offset
	rp.LeaderEpoch = 7
	metadata := "meta"
	rp.Metadata = &metadata
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	a := &answer[*kmsg.OffsetCommitResponse]{}
	tc.c.OffsetCommit(req, commitResponder(a.done))
	return a
}

// commitCode commits and settles, and returns the partition's error code.
func (tc *testCoordinator) commitCode(group, memberID string, generation int32, topic string, partition int32, offset int64) int16 {
	tc.t.Helper()
	a := tc.commit(group, memberID, generation, topic, partition, offset)
	tc.settle()
	return a.require(tc.t, "commit").Topics[0].Partitions[0].ErrorCode
}

// fetch returns a group's committed offset of one partition (-1 if none).
func (tc *testCoordinator) fetch(group, topic string, partition int32) int64 {
	tc.t.Helper()
	req := kmsg.NewPtrOffsetFetchRequest()
	req.Version = 8
	rg := kmsg.NewOffsetFetchRequestGroup()
	rg.Group = group
	rt := kmsg.NewOffsetFetchRequestGroupTopic()
	rt.Topic = topic
	rt.Partitions = []int32{partition}
	rg.Topics = append(rg.Topics, rt)
	req.Groups = append(req.Groups, rg)
	resp := tc.c.OffsetFetch(req)
	answer := resp.Groups[0]
	requireCode(tc.t, "fetch", answer.ErrorCode, nil)
	p := answer.Topics[0].Partitions[0]
	requireCode(tc.t, "fetch partition", p.ErrorCode, nil)
	return p.Offset
}

func (tc *testCoordinator) describe(group string) kmsg.DescribeGroupsResponseGroup {
	req := kmsg.NewPtrDescribeGroupsRequest()
	req.Version = 5
	req.Groups = []string{group}
	return tc.c.DescribeGroups(req).Groups[0]
}

// requireCode fails unless code is want's (0 for nil).
func requireCode(t tester, what string, code int16, want *kerr.Error) {
	t.Helper()
	wantCode := int16(0)
	if want != nil {
		wantCode = want.Code
	}
	if code != wantCode {
		t.Fatalf("%s: got %v, want %v", what, kerr.ErrorForCode(code), want)
	}
}

// requireState fails unless the group is in state s.
func (tc *testCoordinator) requireState(id string, s state) {
	tc.t.Helper()
	g := tc.group(id)
	if g == nil {
		tc.t.Fatalf("group %s does not exist, want %s", id, s)
	}
	if g.state != s {
		tc.t.Fatalf("group %s is %s, want %s", id, g.state, s)
	}
}

// memberIDs lists the ids in a leader's member list.
func memberIDs(members []kmsg.JoinGroupResponseMember) []string {
	var ids []string
	for _, m := range members {
		ids = append(ids, m.MemberID)
	}
	return ids
}

// stableGroup builds a stable group of the named clients: they join
// together, the first is the leader and assigns "assignment-<client>" to
// each. It returns the members in join order.
func (tc *testCoordinator) stableGroup(group string, clients ...string) []*testMember {
	tc.t.Helper()
	var members []*testMember
	var joins []*answer[*kmsg.JoinGroupResponse]
	for _, client := range clients {
		m, join := tc.joinNew(group, client)
		members = append(members, m)
		joins = append(joins, join)
	}
	// Each member arriving during the first rebalance's initial delay
	// makes it wait one delay more (up to the rebalance timeout).
	wait := tc.config.InitialRebalanceDelay
	if len(clients) > 1 {
		wait *= 2
	}
	tc.run(wait)
	for i, m := range members {
		m.joined(tc.t, joins[i].require(tc.t, "join of "+m.clientID))
	}
	leader := members[0]
	if leader.leader != leader.id {
		tc.t.Fatalf("leader is %q, want the first joiner %q", leader.leader, leader.id)
	}
	assignments := map[string]string{}
	for _, m := range members {
		assignments[m.id] = "assignment-" + m.clientID
	}
	var syncs []*answer[*kmsg.SyncGroupResponse]
	for _, m := range members[1:] {
		syncs = append(syncs, tc.sync(m, nil))
	}
	leaderSync := tc.sync(leader, assignments)
	tc.settle()
	leader.synced(tc.t, leaderSync.require(tc.t, "leader sync"))
	for i, m := range members[1:] {
		m.synced(tc.t, syncs[i].require(tc.t, "sync of "+m.clientID))
	}
	for _, m := range members {
		if want := "assignment-" + m.clientID; !bytes.Equal(m.assignment, []byte(want)) {
			tc.t.Fatalf("%s got assignment %q, want %q", m.clientID, m.assignment, want)
		}
	}
	tc.requireState(group, stateStable)
	return members
}

// requireMembers fails unless the group's members are exactly ids, in order.
func (tc *testCoordinator) requireMembers(group string, ids ...string) {
	tc.t.Helper()
	var got []string
	for _, m := range tc.group(group).members {
		got = append(got, m.id)
	}
	if !slices.Equal(got, ids) {
		tc.t.Fatalf("members of %s: %v, want %v", group, got, ids)
	}
}
