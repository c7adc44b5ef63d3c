package broker

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"sluice/core/metadata"
	"sluice/sim"
	"sluice/sim/kernel"
	"sluice/sim/simdisk"
	"sluice/sim/simnet"
)

// This file runs a cluster of real Brokers, each with its Raft quorum
// member, on simulated machines joined by a simulated network: every
// node-to-node request (votes, metadata fetches, registrations,
// heartbeats, forwarded admin requests) crosses simnet, and clients talk
// to any node through the harness's testClient.

// clusterConvergeMax bounds, in virtual time, how long the cluster has to
// elect a controller and register and unfence every broker.
const clusterConvergeMax = 30 * time.Second

// testCluster is n nodes, each broker and controller.
type testCluster struct {
	t       *testing.T
	kernel  *kernel.Kernel
	network *simnet.Network
	nodes   map[int32]*testNode
	ids     []int32
	// log keeps what the nodes logged at info and above, printed when a
	// test fails.
	log *bytes.Buffer
}

func clusterHost(id int32) string              { return fmt.Sprintf("n%d", id) }
func clusterClientAddress(id int32) string     { return clusterHost(id) + ":9092" }
func clusterControllerAddress(id int32) string { return clusterHost(id) + ":9093" }

// newTestCluster starts n nodes and waits until every broker is registered
// and unfenced. configure, when given, changes every node's config.
func newTestCluster(t *testing.T, n int, seed uint64, configure ...func(*Config)) *testCluster {
	t.Helper()
	c := startTestCluster(t, n, seed, configure...)
	c.awaitBrokers(c.ids...)
	return c
}

// startTestCluster starts n nodes without waiting for anything.
func startTestCluster(t *testing.T, n int, seed uint64, configure ...func(*Config)) *testCluster {
	t.Helper()
	log := &bytes.Buffer{}
	k := kernel.NewKernel(seed, kernel.NewTrace(&noteFilter{out: log}))
	c := &testCluster{
		t: t, kernel: k, log: log, nodes: map[int32]*testNode{},
		network: simnet.New(k, kernel.NewRand(seed, "net"), simnet.Faults{LatencyMin: 100 * time.Microsecond, LatencyMax: time.Millisecond}),
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("cluster log (info and above):\n%s", tail(log.String(), 200))
		}
	})
	voters := map[int32]string{}
	for id := int32(1); id <= int32(n); id++ {
		voters[id] = clusterControllerAddress(id)
		c.ids = append(c.ids, id)
	}
	for _, id := range c.ids {
		config := DefaultConfig()
		config.NodeID = id
		config.AdvertisedHost, config.AdvertisedPort = clusterHost(id), 9092
		config.Voters = voters
		config.ControllerAddress = voters[id]
		for _, change := range configure {
			change(&config)
		}
		node := &testNode{t: t, kernel: k, config: config}
		node.machine = sim.NewMachine(k, c.network, clusterHost(id), sim.MachineOptions{
			Disk:   simdisk.Faults{SyncLatencyMin: syncLatencyMin, SyncLatencyMax: syncLatencyMax},
			OnHalt: func(_ *sim.Machine, reason error) { node.halted = reason },
		})
		c.nodes[id] = node
		c.startNode(id)
	}
	return c
}

// startNode starts a node's broker on its machine's current process and
// its listeners: the controller listener only on a controller.
func (c *testCluster) startNode(id int32) {
	c.t.Helper()
	node := c.nodes[id]
	b, err := Start(node.machine.World(), node.config)
	if err != nil {
		c.t.Fatalf("starting node %d: %v", id, err)
	}
	node.broker = b
	if err := node.machine.Net.Listen(clusterClientAddress(id), b); err != nil {
		c.t.Fatal(err)
	}
	if node.config.Roles.resolved().Controller {
		if err := node.machine.Net.Listen(clusterControllerAddress(id), b.ControllerAcceptor()); err != nil {
			c.t.Fatal(err)
		}
	}
}

// addBrokerOnlyNode starts one more node, a broker only: an observer of
// the quorum, never a controller.
func (c *testCluster) addBrokerOnlyNode(id int32) {
	c.t.Helper()
	voters := c.nodes[c.ids[0]].config.Voters
	config := DefaultConfig()
	config.NodeID = id
	config.AdvertisedHost, config.AdvertisedPort = clusterHost(id), 9092
	config.Voters = voters
	config.Roles = Roles{Broker: true}
	node := &testNode{t: c.t, kernel: c.kernel, config: config}
	node.machine = sim.NewMachine(c.kernel, c.network, clusterHost(id), sim.MachineOptions{
		Disk:   simdisk.Faults{SyncLatencyMin: syncLatencyMin, SyncLatencyMax: syncLatencyMax},
		OnHalt: func(_ *sim.Machine, reason error) { node.halted = reason },
	})
	c.nodes[id] = node
	c.ids = append(c.ids, id)
	c.startNode(id)
}

// crash kills a node's process.
func (c *testCluster) crash(id int32) {
	c.nodes[id].machine.Crash()
	c.nodes[id].broker = nil
}

// restart starts a crashed node again on its disk.
func (c *testCluster) restart(id int32) {
	c.t.Helper()
	c.nodes[id].machine.Restart()
	c.startNode(id)
}

// live lists the nodes whose process runs.
func (c *testCluster) live() []int32 {
	var live []int32
	for _, id := range c.ids {
		if c.nodes[id].broker != nil {
			live = append(live, id)
		}
	}
	return live
}

// runUntil runs the simulation until cond holds, failing the test after
// limit of virtual time. It returns how long it took.
func (c *testCluster) runUntil(what string, limit time.Duration, cond func() bool) time.Duration {
	c.t.Helper()
	start := c.kernel.Now()
	if !c.kernel.RunWhile(start+int64(limit), func() bool { return !cond() }) {
		c.t.Fatalf("%s: not within %v", what, limit)
	}
	for _, id := range c.ids {
		if err := c.nodes[id].halted; err != nil {
			c.t.Fatalf("node %d halted: %v", id, err)
		}
	}
	return time.Duration(c.kernel.Now() - start)
}

// run advances virtual time by d.
func (c *testCluster) run(d time.Duration) {
	c.kernel.RunUntil(c.kernel.Now() + int64(d))
}

// controllerLeader is the node every live node agrees leads the quorum,
// with its controller active; -1 while they do not agree.
func (c *testCluster) controllerLeader() int32 {
	agreed := int32(-1)
	for _, id := range c.live() {
		leader, _, known := c.nodes[id].broker.quorum.Leader()
		if !known || (agreed >= 0 && leader != agreed) {
			return -1
		}
		agreed = leader
	}
	if agreed < 0 || c.nodes[agreed].broker == nil || !c.nodes[agreed].broker.controller.IsActive() {
		return -1
	}
	return agreed
}

// awaitBrokers waits until the controller has every given broker
// registered at its current process's epoch and unfenced, and every live
// node's image says so.
func (c *testCluster) awaitBrokers(ids ...int32) time.Duration {
	c.t.Helper()
	return c.runUntil(fmt.Sprintf("brokers %v registered and unfenced", ids), clusterConvergeMax, func() bool {
		if c.controllerLeader() < 0 {
			return false
		}
		for _, observer := range c.live() {
			img := c.nodes[observer].broker.image
			for _, id := range ids {
				b, registered := img.Brokers[id]
				if !registered || b.Fenced || b.Epoch != c.nodes[id].broker.brokerEpoch {
					return false
				}
			}
		}
		return true
	})
}

// client connects a test client to a node.
func (c *testCluster) client(id int32) *testClient {
	return c.nodes[id].connect()
}

// someNonController picks a live node that is not the controller leader.
func (c *testCluster) someNonController() int32 {
	leader := c.controllerLeader()
	for _, id := range c.live() {
		if id != leader {
			return id
		}
	}
	c.t.Fatal("every live node is the controller")
	return -1
}

// createTopicRF creates a topic with an explicit replication factor.
func (cl *testClient) createTopicRF(name string, partitions int32, replicationFactor int16) *kmsg.CreateTopicsResponseTopic {
	cl.node.t.Helper()
	req := kmsg.NewPtrCreateTopicsRequest()
	req.Version = 7
	req.TimeoutMillis = 30_000
	t := kmsg.NewCreateTopicsRequestTopic()
	t.Topic, t.NumPartitions, t.ReplicationFactor = name, partitions, replicationFactor
	req.Topics = append(req.Topics, t)
	resp := cl.request(req).(*kmsg.CreateTopicsResponse)
	answer := &resp.Topics[0]
	requireNoError(cl.node.t, "creating "+name, answer.ErrorCode, answer.ErrorMessage)
	return answer
}

// leadersOf maps each leader to the partitions it leads, from a Metadata
// answer.
func leadersOf(t *testing.T, resp *kmsg.MetadataResponse, topic string) map[int32][]int32 {
	t.Helper()
	for _, rt := range resp.Topics {
		if rt.Topic != nil && *rt.Topic == topic {
			leaders := map[int32][]int32{}
			for _, p := range rt.Partitions {
				leaders[p.Leader] = append(leaders[p.Leader], p.Partition)
			}
			return leaders
		}
	}
	t.Fatalf("Metadata has no topic %q", topic)
	return nil
}

func brokerIDs(resp *kmsg.MetadataResponse) []int32 {
	var ids []int32
	for _, b := range resp.Brokers {
		ids = append(ids, b.NodeID)
	}
	slices.Sort(ids)
	return ids
}

func TestClusterForwardsAdminRequestsAndSpreadsLeaders(t *testing.T) {
	c := newTestCluster(t, 3, 1)
	leader := c.controllerLeader()
	other := c.someNonController()
	client := c.client(other)

	created := client.createTopicRF("orders", 6, 3)
	if created.NumPartitions != 6 || created.ReplicationFactor != 3 {
		t.Fatalf("created %+v", created)
	}
	// The forwarding broker answered only once its own image had the
	// topic: its Metadata shows it at once.
	md := client.metadata("orders")
	if got := brokerIDs(md); !slices.Equal(got, []int32{1, 2, 3}) {
		t.Fatalf("Metadata lists brokers %v", got)
	}
	if md.ControllerID != leader {
		t.Fatalf("Metadata names controller %d, the quorum leader is %d", md.ControllerID, leader)
	}
	leaders := leadersOf(t, md, "orders")
	for _, id := range c.ids {
		if len(leaders[id]) != 2 {
			t.Fatalf("leaders %v: want each of the 3 brokers leading 2 of the 6 partitions", leaders)
		}
	}
	for _, p := range md.Topics[0].Partitions {
		if len(p.Replicas) != 3 || len(p.ISR) != 3 || p.Leader != p.Replicas[0] {
			t.Fatalf("partition %+v", p)
		}
	}
	// Every node's image converges to the same partitions.
	c.runUntil("every node knows the topic", time.Second, func() bool {
		for _, id := range c.ids {
			if topic, ok := c.nodes[id].broker.image.Topics["orders"]; !ok || len(topic.Partitions) != 6 {
				return false
			}
		}
		return true
	})

	// The other admin requests take the same path.
	grow := kmsg.NewPtrCreatePartitionsRequest()
	grow.Version = 3
	growTopic := kmsg.NewCreatePartitionsRequestTopic()
	growTopic.Topic, growTopic.Count = "orders", 9
	grow.Topics = append(grow.Topics, growTopic)
	grown := client.request(grow).(*kmsg.CreatePartitionsResponse)
	requireNoError(t, "growing orders", grown.Topics[0].ErrorCode, grown.Topics[0].ErrorMessage)
	if n := len(c.nodes[other].broker.image.Topics["orders"].Partitions); n != 9 {
		t.Fatalf("the forwarding broker answered with %d partitions in its image, want 9", n)
	}

	alter := kmsg.NewPtrIncrementalAlterConfigsRequest()
	alter.Version = 1
	resource := kmsg.NewIncrementalAlterConfigsRequestResource()
	resource.ResourceType, resource.ResourceName = kmsg.ConfigResourceTypeTopic, "orders"
	config := kmsg.NewIncrementalAlterConfigsRequestResourceConfig()
	value := "60000"
	config.Name, config.Op, config.Value = "retention.ms", kmsg.IncrementalAlterConfigOpSet, &value
	resource.Configs = append(resource.Configs, config)
	alter.Resources = append(alter.Resources, resource)
	altered := client.request(alter).(*kmsg.IncrementalAlterConfigsResponse)
	requireNoError(t, "altering orders", altered.Resources[0].ErrorCode, altered.Resources[0].ErrorMessage)
	if got := c.nodes[leader].broker.image.TopicConfigs("orders")["retention.ms"]; got != "60000" {
		t.Fatalf("the controller's image has retention.ms %q", got)
	}

	del := kmsg.NewPtrDeleteTopicsRequest()
	del.Version = 5
	del.TopicNames = []string{"orders"}
	deleted := client.request(del).(*kmsg.DeleteTopicsResponse)
	requireNoError(t, "deleting orders", deleted.Topics[0].ErrorCode, deleted.Topics[0].ErrorMessage)
	if _, exists := c.nodes[other].broker.image.Topics["orders"]; exists {
		t.Fatal("the forwarding broker answered the deletion before applying it")
	}

	// Producer ids come in blocks from the controller, wherever asked.
	init := kmsg.NewPtrInitProducerIDRequest()
	init.Version = 4
	first := client.request(init).(*kmsg.InitProducerIDResponse)
	second := c.client(leader).request(init).(*kmsg.InitProducerIDResponse)
	requireNoError(t, "producer id", first.ErrorCode, nil)
	requireNoError(t, "producer id", second.ErrorCode, nil)
	if first.ProducerID == second.ProducerID {
		t.Fatalf("two brokers handed out producer id %d", first.ProducerID)
	}
}

func TestClusterFencesACrashedBrokerAndMovesItsLeaderships(t *testing.T) {
	c := newTestCluster(t, 3, 2)
	leader := c.controllerLeader()
	victim := c.someNonController()
	client := c.client(leader)
	client.createTopicRF("orders", 6, 3)
	before := leadersOf(t, client.metadata("orders"), "orders")
	if len(before[victim]) == 0 {
		t.Fatalf("broker %d leads nothing: %v", victim, before)
	}

	c.crash(victim)
	session := DefaultConfig().SessionTimeout
	took := c.runUntil("the crashed broker fenced", session+DefaultConfig().HeartbeatInterval+time.Second, func() bool {
		b := c.nodes[leader].broker.image.Brokers[victim]
		return b.Fenced
	})
	t.Logf("broker %d fenced %v after its crash (session timeout %v)", victim, took, session)
	md := client.metadata("orders")
	if got := brokerIDs(md); slices.Contains(got, victim) {
		t.Fatalf("Metadata still lists the fenced broker: %v", got)
	}
	after := leadersOf(t, md, "orders")
	if len(after[victim]) != 0 || len(after[-1]) != 0 {
		t.Fatalf("leaders after fencing %d: %v", victim, after)
	}
	for _, p := range md.Topics[0].Partitions {
		if slices.Contains(p.ISR, victim) || !slices.Contains(p.ISR, p.Leader) {
			t.Fatalf("partition %d: leader %d ISR %v", p.Partition, p.Leader, p.ISR)
		}
	}

	// Back again: a new incarnation registers and is unfenced.
	c.restart(victim)
	c.awaitBrokers(victim)
	if got := brokerIDs(client.metadata()); !slices.Equal(got, []int32{1, 2, 3}) {
		t.Fatalf("Metadata after the restart lists %v", got)
	}
}

func TestClusterElectsANewControllerWhenTheLeaderCrashes(t *testing.T) {
	c := newTestCluster(t, 3, 3)
	old := c.controllerLeader()
	c.client(old).createTopicRF("orders", 6, 3)
	survivor := c.someNonController()

	c.crash(old)
	took := c.runUntil("a new controller", clusterConvergeMax, func() bool {
		leader := c.controllerLeader()
		return leader >= 0 && leader != old
	})
	t.Logf("a new controller was active %v after the leader's crash", took)
	// A fresh session for everyone, then the crashed one is fenced.
	c.runUntil("the old controller's broker fenced", DefaultConfig().SessionTimeout+5*time.Second, func() bool {
		return c.nodes[survivor].broker.image.Brokers[old].Fenced
	})
	// Admin requests still work through any broker.
	client := c.client(survivor)
	client.createTopicRF("after", 4, 2)
	for leader, partitions := range leadersOf(t, client.metadata("after"), "after") {
		if leader == old || leader < 0 {
			t.Fatalf("partitions %v led by %d", partitions, leader)
		}
	}
}

func TestClusterControlledShutdownMovesLeadershipsFirst(t *testing.T) {
	c := newTestCluster(t, 3, 4)
	leader := c.controllerLeader()
	leaving := c.someNonController()
	client := c.client(leader)
	client.createTopicRF("orders", 6, 3)

	stopped := false
	c.nodes[leaving].broker.Shutdown(func() { stopped = true })
	c.runUntil("the shutdown", DefaultConfig().ControlledShutdownTimeout, func() bool { return stopped })
	c.nodes[leaving].machine.Crash()
	c.nodes[leaving].broker = nil
	// Within the controlled shutdown, not after a session timeout: the
	// controller had moved every leadership and fenced the broker before
	// it stopped.
	img := c.nodes[leader].broker.image
	if !img.Brokers[leaving].Fenced {
		t.Fatal("the broker stopped before the controller fenced it")
	}
	for leaderID, partitions := range leadersOf(t, client.metadata("orders"), "orders") {
		if leaderID == leaving || leaderID < 0 {
			t.Fatalf("partitions %v led by %d after a controlled shutdown", partitions, leaderID)
		}
	}
}

func TestClusterNodeToNodeAPIsAreNotOfferedToClients(t *testing.T) {
	c := newTestCluster(t, 3, 5)
	client := c.client(c.ids[0])
	req := kmsg.NewPtrApiVersionsRequest()
	req.Version = 3
	req.ClientSoftwareName, req.ClientSoftwareVersion = "test", "1"
	resp := client.request(req).(*kmsg.ApiVersionsResponse)
	for _, key := range resp.ApiKeys {
		switch key.ApiKey {
		case 52, 53, 54, 56, 59, 62, 63, 67:
			t.Fatalf("the client listener advertises %s", kmsg.NameForKey(key.ApiKey))
		case 1:
			if key.MaxVersion != fetchVersionMax {
				t.Fatalf("the client listener advertises Fetch up to v%d", key.MaxVersion)
			}
		}
	}
	// A heartbeat on the client listener is an unknown API: the
	// connection is closed, as Kafka closes it.
	hb := kmsg.NewPtrBrokerHeartbeatRequest()
	hb.BrokerID, hb.BrokerEpoch = 1, 1
	pending := client.send(hb)
	c.run(time.Second)
	if pending.answered() || !client.conn.closed {
		t.Fatal("a heartbeat on the client listener was served")
	}
}

// noteFilter keeps the trace's log lines at info and above.
type noteFilter struct{ out *bytes.Buffer }

func (f *noteFilter) Write(p []byte) (int, error) {
	for _, line := range strings.SplitAfter(string(p), "\n") {
		if strings.Contains(line, " INFO ") || strings.Contains(line, " WARN ") || strings.Contains(line, " ERROR ") {
			f.out.WriteString(line)
		}
	}
	return len(p), nil
}

// tail is the last n lines of s.
func tail(s string, n int) string {
	lines := strings.Split(s, "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

func TestClusterRunsReplayFromTheirSeed(t *testing.T) {
	hash := func() string {
		c := newTestCluster(t, 3, 7)
		c.client(c.someNonController()).createTopicRF("orders", 6, 3)
		c.crash(c.controllerLeader())
		c.run(20 * time.Second)
		return c.kernel.Trace().Hash()
	}
	first, second := hash(), hash()
	if first != second {
		t.Fatalf("one seed gave two traces: %s and %s", first, second)
	}
}

func TestClusterReplacesAnIsolatedController(t *testing.T) {
	c := newTestCluster(t, 3, 6)
	old := c.controllerLeader()
	var others []string
	var survivors []int32
	for _, id := range c.ids {
		if id != old {
			others = append(others, clusterHost(id))
			survivors = append(survivors, id)
		}
	}
	c.network.Partition([]string{clusterHost(old)}, others)
	observer := c.nodes[survivors[0]].broker
	took := c.runUntil("the majority elects a controller and fences the isolated broker", clusterConvergeMax, func() bool {
		leader, _, known := observer.quorum.Leader()
		return known && leader != old && observer.image.Brokers[old].Fenced
	})
	t.Logf("isolated broker %d fenced by the majority %v after the partition", old, took)
	// The survivors kept their sessions with the new controller
	// throughout: fenced for no instant, so every partition they lead
	// stays led.
	c.run(2 * DefaultConfig().SessionTimeout)
	for _, id := range survivors {
		if b := observer.image.Brokers[id]; b.Fenced || b.Epoch != c.nodes[id].broker.brokerEpoch {
			t.Fatalf("survivor %d: %+v", id, b)
		}
	}
	if fenced := strings.Count(c.log.String(), "broker fenced "); fenced != 1 {
		t.Fatalf("%d fencings logged, want only the isolated broker's:\n%s", fenced, tail(c.log.String(), 60))
	}
	// Healed, the old controller's node follows the new leader and its
	// broker is unfenced again.
	c.network.Heal()
	c.awaitBrokers(c.ids...)
}

func TestClusterNodeCatchesUpFromASnapshot(t *testing.T) {
	const snapshotEvery, laterTopics = 20, 12
	c := newTestCluster(t, 3, 8, func(config *Config) { config.SnapshotEveryRecords = snapshotEvery })
	leader := c.controllerLeader()
	lagging := c.someNonController()
	client := c.client(leader)
	client.createTopicRF("doomed", 3, 3)
	c.runUntil("every node has the topic", time.Second, func() bool {
		_, ok := c.nodes[lagging].broker.image.Topics["doomed"]
		return ok
	})
	c.crash(lagging)

	// While it is down: a topic it hosts goes, others come, and enough
	// records commit for the leader to snapshot and cut its log.
	del := kmsg.NewPtrDeleteTopicsRequest()
	del.Version = 5
	del.TopicNames = []string{"doomed"}
	deleted := client.request(del).(*kmsg.DeleteTopicsResponse)
	requireNoError(t, "deleting doomed", deleted.Topics[0].ErrorCode, deleted.Topics[0].ErrorMessage)
	for i := range laterTopics {
		client.createTopicRF(fmt.Sprintf("later-%d", i), 6, 2)
	}
	if offset := c.nodes[leader].broker.image.Offset; offset < 3*snapshotEvery {
		t.Fatalf("only %d metadata records; the test needs snapshots", offset)
	}

	c.restart(lagging)
	c.awaitBrokers(lagging)
	restored := false
	for _, line := range strings.Split(c.log.String(), "\n") {
		restored = restored || strings.Contains(line, " "+clusterHost(lagging)+" INFO metadata restored from a snapshot") &&
			strings.Contains(line, "at_start=false")
	}
	if !restored {
		t.Fatal("the restarted node caught up without a snapshot from the leader: the test does not test what it says")

	}
	img := c.nodes[lagging].broker.image
	if _, exists := img.Topics["doomed"]; exists {
		t.Fatal("the restarted node still has the deleted topic")
	}
	for i := range laterTopics {
		if topic, exists := img.Topics[fmt.Sprintf("later-%d", i)]; !exists || len(topic.Partitions) != 6 {
			t.Fatalf("the restarted node lacks later-%d: %+v", i, topic)
		}
	}
	requireEqualImages(t, c.nodes[leader].broker.image, img)
	names, err := c.nodes[lagging].machine.Disk.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range names {
		if strings.HasPrefix(name, "doomed-") {
			t.Fatalf("the restarted node kept %s of the deleted topic", name)
		}
	}
}

// requireEqualImages compares two nodes' images by their records, which
// list everything an image holds in a fixed order.
func requireEqualImages(t *testing.T, want, got *metadata.Image) {
	t.Helper()
	if want.Offset != got.Offset {
		t.Fatalf("images at offsets %d and %d", want.Offset, got.Offset)
	}
	wantRecords, gotRecords := want.Records(), got.Records()
	if len(wantRecords) != len(gotRecords) {
		t.Fatalf("images of %d and %d records", len(wantRecords), len(gotRecords))
	}
	for i := range wantRecords {
		if a, b := string(wantRecords[i].Encode()), string(gotRecords[i].Encode()); a != b {
			t.Fatalf("images differ at record %d:\n%s\n%s", i, a, b)
		}
	}
}

func TestClusterWithABrokerOnlyNode(t *testing.T) {
	c := newTestCluster(t, 3, 9)
	c.addBrokerOnlyNode(4)
	c.awaitBrokers(c.ids...)
	observer := c.nodes[4].broker
	if observer.controller.IsActive() {
		t.Fatal("a broker-only node's controller is active")
	}
	client := c.client(4)
	client.createTopicRF("wide", 8, 2)
	md := client.metadata("wide")
	if got := brokerIDs(md); !slices.Equal(got, []int32{1, 2, 3, 4}) {
		t.Fatalf("brokers %v", got)
	}
	if leaders := leadersOf(t, md, "wide"); len(leaders[4]) != 2 {
		t.Fatalf("the broker-only node leads %v, want 2 of 8 partitions", leaders[4])
	}
	// It never becomes the controller, even when the leader goes.
	old := c.controllerLeader()
	c.crash(old)
	c.runUntil("a new controller", clusterConvergeMax, func() bool {
		leader := c.controllerLeader()
		return leader >= 0 && leader != old
	})
	if c.controllerLeader() == 4 {
		t.Fatal("the broker-only node leads the quorum")
	}
}
