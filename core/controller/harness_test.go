package controller

import (
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"sluice/core"
	"sluice/core/metadata"
	"sluice/core/wire"
	"sluice/sim"
	"sluice/sim/kernel"
)

// testEntropy is splitmix64: a seeded, reproducible core.Entropy.
type testEntropy struct{ state uint64 }

func (e *testEntropy) Uint64() uint64 {
	e.state += 0x9e3779b97f4a7c15
	z := e.state
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// fakeProposer commits by applying records to the controller's image at
// increasing offsets, as the quorum would. Committing is synchronous,
// unless holding is set: then proposals wait in pending until release.
type fakeProposer struct {
	controller *Controller
	nextOffset int64
	holding    bool
	pending    []proposal
	// failure, when set, fails every proposal without applying it.
	failure error
	// proposals records every proposal, committed or not.
	proposals [][]metadata.Record
}

type proposal struct {
	records []metadata.Record
	done    func(lastOffset int64, err error)
}

func (p *fakeProposer) Propose(records []metadata.Record, done func(lastOffset int64, err error)) {
	if len(records) == 0 {
		panic("fakeProposer: empty proposal")
	}
	p.proposals = append(p.proposals, records)
	switch {
	case p.failure != nil:
		done(-1, p.failure)
	case p.holding:
		p.pending = append(p.pending, proposal{records: records, done: done})
	default:
		p.commit(records, done)
	}
}

func (p *fakeProposer) commit(records []metadata.Record, done func(lastOffset int64, err error)) {
	p.apply(records...)
	done(p.nextOffset-1, nil)
}

// apply commits records outside any operation, as another writer would.
func (p *fakeProposer) apply(records ...metadata.Record) {
	for _, r := range records {
		if err := p.controller.Apply(p.nextOffset, r); err != nil {
			panic(err)
		}
		p.nextOffset++
	}
}

// changes counts the proposals that change the metadata: every proposal
// but the no-op barriers an administrator's request commits before it
// answers without changing anything (submitAdmin).
func (p *fakeProposer) changes() int {
	changing := 0
	for _, records := range p.proposals {
		if len(records) != 1 || records[0].NoOp == nil {
			changing++
		}
	}
	return changing
}

// release commits the oldest held proposal.
func (p *fakeProposer) release(t *testing.T) {
	t.Helper()
	if len(p.pending) == 0 {
		t.Fatal("no proposal is pending")
	}
	next := p.pending[0]
	p.pending = p.pending[1:]
	p.commit(next.records, next.done)
}

// tester is what the harness needs of a test: *testing.T, or *rapid.T in
// property tests.
type tester interface {
	Helper()
	Fatal(args ...any)
	Fatalf(format string, args ...any)
}

// testController is an active controller over a fake quorum, on a
// simulated clock, with brokers registered and unfenced by a heartbeat.
// The proposals of that setup are forgotten, so a test sees only its own.
type testController struct {
	t        tester
	c        *Controller
	kernel   *kernel.Kernel
	proposer *fakeProposer
	epochs   map[int32]int64
	// incarnations counts the incarnation ids handed out.
	incarnations byte
}

func newTestController(t tester, config Config, brokers ...int32) *testController {
	t.Helper()
	tc := newInactiveController(t, config)
	tc.c.Activate(1)
	if !tc.c.IsActive() {
		t.Fatal("the controller is not active after its barrier committed")
	}
	for _, id := range brokers {
		resp := tc.register(id)
		if resp.ErrorCode != 0 {
			t.Fatalf("registering broker %d: %v", id, kerr.ErrorForCode(resp.ErrorCode))
		}
		if hb := tc.heartbeat(id, heartbeatOptions{}); hb.ErrorCode != 0 || hb.IsFenced {
			t.Fatalf("unfencing broker %d: %v, fenced %v", id, kerr.ErrorForCode(hb.ErrorCode), hb.IsFenced)
		}
	}
	tc.proposer.proposals = nil
	return tc
}

// newInactiveController is a controller nobody activated yet.
func newInactiveController(t tester, config Config) *testController {
	t.Helper()
	k := kernel.NewKernel(1, nil)
	machine := sim.NewMachine(k, nil, "controller", sim.MachineOptions{})
	w := core.World{Clock: machine.Clock, Entropy: &testEntropy{state: 42}, Log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	p := &fakeProposer{}
	c := New(w, config, p)
	p.controller = c
	return &testController{t: t, c: c, kernel: k, proposer: p, epochs: map[int32]int64{}}
}

// elapse runs the simulated clock forward by d: session timers fire.
func (tc *testController) elapse(d time.Duration) {
	tc.kernel.RunUntil(tc.kernel.Now() + int64(d))
}

// heartbeatOptions are a heartbeat's flags. A nil offset is the current
// metadata offset (a broker that has applied everything); a zero epoch is
// the broker's registered one.
type heartbeatOptions struct {
	wantFence, wantShutdown bool
	offset                  *int64
	epoch                   int64
}

// at is a metadata offset for heartbeatOptions.
func at(offset int64) *int64 { return &offset }

func (tc *testController) heartbeat(id int32, o heartbeatOptions) *kmsg.BrokerHeartbeatResponse {
	tc.t.Helper()
	req := kmsg.NewPtrBrokerHeartbeatRequest()
	req.BrokerID, req.BrokerEpoch = id, tc.epochs[id]
	if o.epoch != 0 {
		req.BrokerEpoch = o.epoch
	}
	req.CurrentMetadataOffset = tc.c.Image().Offset
	if o.offset != nil {
		req.CurrentMetadataOffset = *o.offset
	}
	req.WantFence, req.WantShutdown = o.wantFence, o.wantShutdown
	return call(tc.t, func(done func(*kmsg.BrokerHeartbeatResponse)) {
		tc.c.BrokerHeartbeat(req, wire.ResponderFunc(func(resp kmsg.Response) { done(resp.(*kmsg.BrokerHeartbeatResponse)) }))
	})
}

// register registers a new incarnation of broker id.
func (tc *testController) register(id int32) *kmsg.BrokerRegistrationResponse {
	tc.t.Helper()
	tc.incarnations++
	return tc.registerIncarnation(id, tc.incarnations)
}

// registerIncarnation registers broker id with the given incarnation.
func (tc *testController) registerIncarnation(id int32, incarnation byte) *kmsg.BrokerRegistrationResponse {
	tc.t.Helper()
	req := kmsg.NewPtrBrokerRegistrationRequest()
	req.BrokerID = id
	req.IncarnationID[0] = incarnation
	listener := kmsg.NewBrokerRegistrationRequestListener()
	listener.Name, listener.Host, listener.Port = "PLAINTEXT", "host", uint16(9000+id)
	req.Listeners = append(req.Listeners, listener)
	resp := call(tc.t, func(done func(*kmsg.BrokerRegistrationResponse)) { tc.c.RegisterBroker(req, done) })
	if resp.ErrorCode == 0 {
		tc.epochs[id] = resp.BrokerEpoch
	}
	return resp
}

// fence fences a registered broker directly in the metadata, as a missed
// heartbeat session will.
func (tc *testController) fence(id int32) {
	tc.proposer.apply(metadata.Record{BrokerFence: &metadata.BrokerFenceRecord{
		BrokerID: id, BrokerEpoch: tc.c.Image().Brokers[id].Epoch, Fenced: true,
	}})
}

// call runs an operation that answers synchronously and returns its answer.
func call[R any](t tester, operation func(done func(R))) R {
	t.Helper()
	var answer R
	answered := 0
	operation(func(r R) {
		answer = r
		answered++
	})
	if answered != 1 {
		t.Fatalf("operation answered %d times, want once", answered)
	}
	return answer
}

// topicRequest builds one topic of a CreateTopics request.
func topicRequest(name string, partitions int32, replicationFactor int16, configs ...string) kmsg.CreateTopicsRequestTopic {
	t := kmsg.NewCreateTopicsRequestTopic()
	t.Topic, t.NumPartitions, t.ReplicationFactor = name, partitions, replicationFactor
	for i := 0; i+1 < len(configs); i += 2 {
		config := kmsg.NewCreateTopicsRequestTopicConfig()
		value := configs[i+1]
		config.Name, config.Value = configs[i], &value
		t.Configs = append(t.Configs, config)
	}
	return t
}

func (tc *testController) createTopics(validateOnly bool, topics ...kmsg.CreateTopicsRequestTopic) *kmsg.CreateTopicsResponse {
	tc.t.Helper()
	req := kmsg.NewPtrCreateTopicsRequest()
	req.Version = 7
	req.ValidateOnly = validateOnly
	req.Topics = topics
	resp := call(tc.t, func(done func(*kmsg.CreateTopicsResponse)) { tc.c.CreateTopics(req, done) })
	if len(resp.Topics) != len(topics) {
		tc.t.Fatalf("CreateTopics answered %d topics for %d", len(resp.Topics), len(topics))
	}
	for i := range topics {
		if resp.Topics[i].Topic != topics[i].Topic {
			tc.t.Fatalf("answer %d is for %q, want %q", i, resp.Topics[i].Topic, topics[i].Topic)
		}
	}
	return resp
}

// mustCreate creates one topic and fails the test if it is refused.
func (tc *testController) mustCreate(name string, partitions int32, replicationFactor int16, configs ...string) *metadata.Topic {
	tc.t.Helper()
	resp := tc.createTopics(false, topicRequest(name, partitions, replicationFactor, configs...))
	if code := resp.Topics[0].ErrorCode; code != 0 {
		tc.t.Fatalf("creating %q: %v: %s", name, kerr.ErrorForCode(code), deref(resp.Topics[0].ErrorMessage))
	}
	return tc.c.Image().Topics[name]
}

func (tc *testController) deleteTopics(names ...string) *kmsg.DeleteTopicsResponse {
	tc.t.Helper()
	req := kmsg.NewPtrDeleteTopicsRequest()
	req.Version = 5
	req.TopicNames = names
	return call(tc.t, func(done func(*kmsg.DeleteTopicsResponse)) { tc.c.DeleteTopics(req, done) })
}

func (tc *testController) createPartitions(validateOnly bool, topics ...kmsg.CreatePartitionsRequestTopic) *kmsg.CreatePartitionsResponse {
	tc.t.Helper()
	req := kmsg.NewPtrCreatePartitionsRequest()
	req.Version = 3
	req.ValidateOnly = validateOnly
	req.Topics = topics
	return call(tc.t, func(done func(*kmsg.CreatePartitionsResponse)) { tc.c.CreatePartitions(req, done) })
}

func growTo(name string, count int32, assignment ...[]int32) kmsg.CreatePartitionsRequestTopic {
	t := kmsg.NewCreatePartitionsRequestTopic()
	t.Topic, t.Count = name, count
	for _, replicas := range assignment {
		a := kmsg.NewCreatePartitionsRequestTopicAssignment()
		a.Replicas = replicas
		t.Assignment = append(t.Assignment, a)
	}
	return t
}

// incremental builds an IncrementalAlterConfigs resource from
// (name, op, value) triples; a value "<nil>" is null.
func incremental(resourceType kmsg.ConfigResourceType, name string, ops ...any) kmsg.IncrementalAlterConfigsRequestResource {
	r := kmsg.NewIncrementalAlterConfigsRequestResource()
	r.ResourceType, r.ResourceName = resourceType, name
	for i := 0; i+2 < len(ops); i += 3 {
		config := kmsg.NewIncrementalAlterConfigsRequestResourceConfig()
		config.Name = ops[i].(string)
		config.Op = ops[i+1].(kmsg.IncrementalAlterConfigOp)
		if value := ops[i+2].(string); value != "<nil>" {
			config.Value = &value
		}
		r.Configs = append(r.Configs, config)
	}
	return r
}

func (tc *testController) incrementalAlter(validateOnly bool, resources ...kmsg.IncrementalAlterConfigsRequestResource) *kmsg.IncrementalAlterConfigsResponse {
	tc.t.Helper()
	req := kmsg.NewPtrIncrementalAlterConfigsRequest()
	req.Version = 1
	req.ValidateOnly = validateOnly
	req.Resources = resources
	return call(tc.t, func(done func(*kmsg.IncrementalAlterConfigsResponse)) { tc.c.IncrementalAlterConfigs(req, done) })
}

// legacy builds an AlterConfigs resource from name, value pairs.
func legacy(resourceType kmsg.ConfigResourceType, name string, pairs ...string) kmsg.AlterConfigsRequestResource {
	r := kmsg.NewAlterConfigsRequestResource()
	r.ResourceType, r.ResourceName = resourceType, name
	for i := 0; i+1 < len(pairs); i += 2 {
		config := kmsg.NewAlterConfigsRequestResourceConfig()
		value := pairs[i+1]
		config.Name, config.Value = pairs[i], &value
		r.Configs = append(r.Configs, config)
	}
	return r
}

func (tc *testController) alter(validateOnly bool, resources ...kmsg.AlterConfigsRequestResource) *kmsg.AlterConfigsResponse {
	tc.t.Helper()
	req := kmsg.NewPtrAlterConfigsRequest()
	req.Version = 2
	req.ValidateOnly = validateOnly
	req.Resources = resources
	return call(tc.t, func(done func(*kmsg.AlterConfigsResponse)) { tc.c.AlterConfigs(req, done) })
}

// requireCode fails unless code is want.
func requireCode(t *testing.T, what string, code int16, message *string, want *kerr.Error) {
	t.Helper()
	wantCode := int16(0)
	if want != nil {
		wantCode = want.Code
	}
	if code != wantCode {
		t.Fatalf("%s: got %v (%s), want %v", what, kerr.ErrorForCode(code), deref(message), want)
	}
	if want != nil && deref(message) == "" {
		t.Fatalf("%s: %v without a message", what, want)
	}
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// heartbeatInterval is how often the test's live brokers heartbeat while
// time passes (Kafka's broker.heartbeat.interval.ms).
const heartbeatInterval = 2 * time.Second

// expire lets broker id's session run out while every other registered
// broker keeps heartbeating, as when one broker's process dies: the
// controller fences it.
func (tc *testController) expire(id int32) {
	tc.t.Helper()
	for waited := time.Duration(0); waited <= tc.c.config.SessionTimeout; waited += heartbeatInterval {
		tc.heartbeatAllBut(id)
		tc.elapse(heartbeatInterval)
	}
	if b := tc.c.Image().Brokers[id]; !b.Fenced {
		tc.t.Fatalf("broker %d is still unfenced after its session expired", id)
	}
}

// heartbeatAllBut heartbeats every registered broker except one.
func (tc *testController) heartbeatAllBut(id int32) {
	tc.t.Helper()
	for _, other := range tc.c.Image().BrokerIDs() {
		if other == id || tc.c.Image().Brokers[other].Epoch != tc.epochs[other] {
			continue
		}
		if resp := tc.heartbeat(other, heartbeatOptions{}); resp.ErrorCode != 0 {
			tc.t.Fatalf("heartbeat of broker %d: %v", other, kerr.ErrorForCode(resp.ErrorCode))
		}
	}
}
