package broker

import (
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"sluice/core"
	"sluice/core/batch"
	"sluice/core/wire"
	"sluice/sim"
	"sluice/sim/kernel"
	"sluice/sim/simdisk"
)

// This file is a harness for driving a real Broker on a simulated machine
// (virtual clock, simulated disk) through its client connections, with
// Kafka requests encoded and answers decoded as on the wire:
//
//	node := newTestNode(t, DefaultConfig())
//	client := node.connect()
//	resp := client.request(createTopicsRequest).(*kmsg.CreateTopicsResponse)
//	node.restart() // crash and start again on the same disk
//
// Nothing waits on wall-clock time: request runs the simulation's events
// until the answer arrives, within answerWaitMax of virtual time.

// answerWaitMax bounds how long, in virtual time, request waits for an
// answer: far above any disk latency the simulated disk draws.
const answerWaitMax = time.Minute

// settleTime is how long, in virtual time, a node runs after starting so
// that its registration and first syncs complete.
const settleTime = time.Second

// The simulated disk's sync latency: a fast SSD.
const (
	syncLatencyMin = 100 * time.Microsecond
	syncLatencyMax = 2 * time.Millisecond
)

// testConn is the client's end of a connection as the broker sees it: it
// keeps every frame the broker sends.
type testConn struct {
	sent   [][]byte
	closed bool
	paused bool
}

func (c *testConn) Send(frame []byte) bool {
	if c.closed {
		return false
	}
	c.sent = append(c.sent, frame)
	return true
}
func (c *testConn) Close()             { c.closed = true }
func (c *testConn) RemoteAddr() string { return "test-client" }
func (c *testConn) PauseReceiving()    { c.paused = true }
func (c *testConn) ResumeReceiving()   { c.paused = false }

// testNode is one broker on one simulated machine.
type testNode struct {
	t       *testing.T
	kernel  *kernel.Kernel
	machine *sim.Machine
	config  Config
	broker  *Broker
	halted  error
}

func newTestNode(t *testing.T, config Config) *testNode {
	t.Helper()
	return newTestNodeWith(t, config, nil)
}

// newTestNodeWith is newTestNode with BUGGIFY sites (nil: none, as in
// production).
func newTestNodeWith(t *testing.T, config Config, buggify *core.Buggify) *testNode {
	t.Helper()
	k := kernel.NewKernel(1, nil)
	n := &testNode{t: t, kernel: k, config: config}
	n.machine = sim.NewMachine(k, nil, "n1", sim.MachineOptions{
		// Syncs take time, so that a crash right after a request can
		// lose what was not waited for.
		Disk:    simdisk.Faults{SyncLatencyMin: syncLatencyMin, SyncLatencyMax: syncLatencyMax},
		Buggify: buggify,
		OnHalt:  func(_ *sim.Machine, reason error) { n.halted = reason },
	})
	n.start()
	return n
}

// start starts the broker on the machine's current process and lets it
// settle.
func (n *testNode) start() {
	n.t.Helper()
	b, err := Start(n.machine.World(), n.config)
	if err != nil {
		n.t.Fatalf("starting the broker: %v", err)
	}
	n.broker = b
	n.run(settleTime)
	if b.brokerEpoch == 0 {
		n.t.Fatal("the broker did not register within the settle time")
	}
}

// run advances virtual time by d, running every event due meanwhile.
func (n *testNode) run(d time.Duration) {
	n.t.Helper()
	n.kernel.RunUntil(n.kernel.Now() + int64(d))
	n.checkAlive()
}

func (n *testNode) checkAlive() {
	n.t.Helper()
	if n.halted != nil {
		n.t.Fatalf("the node halted: %v", n.halted)
	}
}

// restart crashes the machine (unsynced writes may be lost) and starts a
// new broker on the same disk.
func (n *testNode) restart() {
	n.t.Helper()
	n.machine.Crash()
	n.machine.Restart()
	n.start()
}

// testClient is one client connection to the node's broker.
type testClient struct {
	node        *testNode
	conn        *testConn
	handler     interface{ Frame([]byte) }
	correlation int32
	// requests counts the requests sent, each of which gets one answer.
	requests int
}

func (n *testNode) connect() *testClient {
	conn := &testConn{}
	return &testClient{node: n, conn: conn, handler: n.broker.Accept(conn)}
}

// connectController connects to the node's controller listener, where
// other nodes send the node-to-node APIs.
func (n *testNode) connectController() *testClient {
	conn := &testConn{}
	return &testClient{node: n, conn: conn, handler: n.broker.ControllerAcceptor().Accept(conn)}
}

// request sends req (at the version set on it) and returns the decoded
// answer, failing the test if none arrives.
func (c *testClient) request(req kmsg.Request) kmsg.Response {
	c.node.t.Helper()
	return c.send(req).await()
}

// pendingRequest is a request sent without waiting for its answer.
type pendingRequest struct {
	client      *testClient
	request     kmsg.Request
	correlation int32
	// index is the answer's position among the frames the client
	// receives: answers come in request order.
	index int
}

// send sends req and returns at once, so that several clients can have
// requests waiting together (members joining one rebalance); await then
// runs the simulation until the answer arrives.
func (c *testClient) send(req kmsg.Request) *pendingRequest {
	c.correlation++
	c.requests++
	c.handler.Frame(wire.AppendRequest(nil, c.correlation, "sluice-test", req))
	return &pendingRequest{client: c, request: req, correlation: c.correlation, index: c.requests - 1}
}

// answered reports whether the answer has arrived.
func (p *pendingRequest) answered() bool { return len(p.client.conn.sent) > p.index }

// await returns the decoded answer, failing the test if none arrives
// within answerWaitMax of virtual time.
func (p *pendingRequest) await() kmsg.Response {
	c, req := p.client, p.request
	t := c.node.t
	t.Helper()
	k := c.node.kernel
	if !k.RunWhile(k.Now()+int64(answerWaitMax), func() bool { return !p.answered() && !c.conn.closed }) {
		t.Fatalf("no answer to %s v%d within %v", kmsg.NameForKey(req.Key()), req.GetVersion(), answerWaitMax)
	}
	c.node.checkAlive()
	if c.conn.closed {
		t.Fatalf("the broker closed the connection on %s v%d", kmsg.NameForKey(req.Key()), req.GetVersion())
	}
	correlation, resp, err := wire.DecodeResponse(c.conn.sent[p.index], req)
	if err != nil {
		t.Fatalf("decoding the answer to %s: %v", kmsg.NameForKey(req.Key()), err)
	}
	if correlation != p.correlation {
		t.Fatalf("answer has correlation %d, want %d", correlation, p.correlation)
	}
	return resp
}

// requireNoError fails unless code is 0.
func requireNoError(t *testing.T, what string, code int16, message *string) {
	t.Helper()
	requireError(t, what, code, message, nil)
}

// requireError fails unless code is want's (0 for nil).
func requireError(t *testing.T, what string, code int16, message *string, want *kerr.Error) {
	t.Helper()
	wantCode := int16(0)
	if want != nil {
		wantCode = want.Code
	}
	if code != wantCode {
		detail := ""
		if message != nil {
			detail = ": " + *message
		}
		t.Fatalf("%s: got %v%s, want %v", what, kerr.ErrorForCode(code), detail, want)
	}
}

// createTopic creates a topic through CreateTopics v7 and fails the test
// if it is refused.
func (c *testClient) createTopic(name string, partitions int32, configs ...string) *kmsg.CreateTopicsResponseTopic {
	c.node.t.Helper()
	req := kmsg.NewPtrCreateTopicsRequest()
	req.Version = 7
	req.TimeoutMillis = 30_000
	t := kmsg.NewCreateTopicsRequestTopic()
	t.Topic, t.NumPartitions, t.ReplicationFactor = name, partitions, -1
	for i := 0; i+1 < len(configs); i += 2 {
		config := kmsg.NewCreateTopicsRequestTopicConfig()
		value := configs[i+1]
		config.Name, config.Value = configs[i], &value
		t.Configs = append(t.Configs, config)
	}
	req.Topics = append(req.Topics, t)
	resp := c.request(req).(*kmsg.CreateTopicsResponse)
	answer := &resp.Topics[0]
	requireNoError(c.node.t, "creating "+name, answer.ErrorCode, answer.ErrorMessage)
	return answer
}

// produce appends values as one batch with acks=all and returns its base
// offset, failing the test on an error.
func (c *testClient) produce(topic string, partition int32, values ...string) int64 {
	c.node.t.Helper()
	offset, code := c.tryProduce(topic, partition, values...)
	requireNoError(c.node.t, "producing to "+topic, code, nil)
	return offset
}

// tryProduce appends values as one batch with acks=all and returns the
// base offset and error code. Each record's key is its value, so the
// records are accepted by compacted topics too.
func (c *testClient) tryProduce(topic string, partition int32, values ...string) (int64, int16) {
	c.node.t.Helper()
	spec := batch.Spec{BaseTimestamp: c.node.machine.Clock.Now().UnixMilli(), ProducerID: batch.NoProducerID}
	for _, v := range values {
		spec.Records = append(spec.Records, batch.Record{Key: []byte(v), Value: []byte(v)})
	}
	return c.produceBatch(topic, partition, batch.Build(spec))
}

// produceBatch sends one prepared batch with acks=all.
func (c *testClient) produceBatch(topic string, partition int32, records []byte) (int64, int16) {
	c.node.t.Helper()
	req := kmsg.NewPtrProduceRequest()
	req.Version = 9
	req.Acks = -1
	req.TimeoutMillis = 30_000
	rt := kmsg.NewProduceRequestTopic()
	rt.Topic = topic
	rp := kmsg.NewProduceRequestTopicPartition()
	rp.Partition = partition
	rp.Records = records
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	resp := c.request(req).(*kmsg.ProduceResponse)
	answer := resp.Topics[0].Partitions[0]
	return answer.BaseOffset, answer.ErrorCode
}

// fetch reads partition from offset and returns the values of the records
// it got, the error code and the log start offset.
func (c *testClient) fetch(topic string, partition int32, offset int64) ([]string, int16, int64) {
	c.node.t.Helper()
	answer := c.fetchAnswer(topic, partition, offset)
	var values []string
	s := batch.Scanner{Buf: answer.RecordBatches}
	for s.Next() {
		records, err := batch.Records(s.Batch())
		if err != nil {
			c.node.t.Fatalf("decoding fetched records: %v", err)
		}
		h := s.Header()
		for _, r := range records {
			if h.BaseOffset+int64(r.OffsetDelta) >= offset {
				values = append(values, string(r.Value))
			}
		}
	}
	if s.Err() != nil {
		c.node.t.Fatalf("scanning fetched batches: %v", s.Err())
	}
	return values, answer.ErrorCode, answer.LogStartOffset
}

// fetchAnswer fetches up to 1 MiB of partition from offset, as a consumer.
func (c *testClient) fetchAnswer(topic string, partition int32, offset int64) kmsg.FetchResponseTopicPartition {
	c.node.t.Helper()
	return c.request(consumerFetch(topic, partition, offset)).(*kmsg.FetchResponse).Topics[0].Partitions[0]
}

// consumerFetch is a consumer's Fetch of up to 1 MiB of partition from
// offset, answered at once.
func consumerFetch(topic string, partition int32, offset int64) *kmsg.FetchRequest {
	req := kmsg.NewPtrFetchRequest()
	req.Version = 12
	req.ReplicaID = -1
	req.MaxBytes = 1 << 20
	rt := kmsg.NewFetchRequestTopic()
	rt.Topic = topic
	rp := kmsg.NewFetchRequestTopicPartition()
	rp.Partition, rp.FetchOffset, rp.PartitionMaxBytes, rp.CurrentLeaderEpoch = partition, offset, 1<<20, -1
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	return req
}

// fetchAll fetches from offset until a fetch returns nothing more, since
// one fetch may stop at a segment's end.
func (c *testClient) fetchAll(topic string, partition int32, offset int64) ([]string, int16, int64) {
	c.node.t.Helper()
	var all []string
	for {
		values, code, start := c.fetch(topic, partition, offset)
		if code != 0 || len(values) == 0 {
			return all, code, start
		}
		all = append(all, values...)
		offset += int64(len(values))
	}
}

// metadata asks for the named topics (all when none are named) without
// creating any.
func (c *testClient) metadata(topics ...string) *kmsg.MetadataResponse {
	c.node.t.Helper()
	req := kmsg.NewPtrMetadataRequest()
	req.Version = 12
	req.AllowAutoTopicCreation = false
	if len(topics) > 0 {
		req.Topics = []kmsg.MetadataRequestTopic{}
	}
	for _, name := range topics {
		rt := kmsg.NewMetadataRequestTopic()
		n := name
		rt.Topic = &n
		req.Topics = append(req.Topics, rt)
	}
	return c.request(req).(*kmsg.MetadataResponse)
}
