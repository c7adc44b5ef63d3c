package broker

import (
	"fmt"
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
	"pgregory.net/rapid"

	"sluice/core/batch"
	"sluice/core/wire"
)

// hostileRequestsMax bounds the requests one case sends;
// hostilePipelineMax those sent before the first of them is answered.
const (
	hostileRequestsMax = 12
	hostilePipelineMax = 4
)

// hostileSliceMax bounds the elements of each array a request carries;
// hostileDepthMax how far nested structures are filled (kmsg's requests
// nest at most four deep).
const (
	hostileSliceMax = 3
	hostileDepthMax = 5
)

// hostileAnswerWaitMax bounds the virtual time one answer may take. The
// longest legitimate wait is a JoinGroup held for a member that does not
// rejoin, which lasts at most the group's session timeout: the test's
// node bounds it at hostileSessionTimeoutMax.
const (
	hostileSessionTimeoutMax = 20 * time.Second
	hostileAnswerWaitMax     = 2 * hostileSessionTimeoutMax
)

// The topics the requests meet: hostileTopic is one they may name,
// keptTopic one they cannot (its name is not among the strings drawn,
// and its id is never drawn), whose records must survive them all.
const (
	hostileTopic      = "t"
	hostilePartitions = 3
	keptTopic         = "kept-by-the-test"
)

// hostileStrings are the strings a field may get: boundaries, the
// topic and group names the broker knows, internal topics, and names
// Kafka refuses.
var hostileStrings = []string{
	"", hostileTopic, "g", "u", "__consumer_offsets", "__cluster_metadata",
	"..", "a/b", "retention.ms", "cleanup.policy", "compact", "-1",
	strings.Repeat("x", 300),
}

// hostileIntegers are the integer values drawn most often: each is a
// boundary some check must get right.
var hostileIntegers = []int64{-2, -1, 0, 1, 2, 3, 1 << 20, math.MaxInt32, math.MinInt32}

// TestRequestsNoClientSendsAreAnsweredWithoutHarm: a client listener
// faces whatever a client sends. The fuzz tests of core/wire show that no
// frame makes the decoder panic; this goes on to the handlers. It sends
// requests that decode well but that no well-behaved client would send,
// of every API and version the client listener serves, with every field
// drawn (hostileFiller) from values a client might send and from values
// on a boundary: -1, 0, the largest int32, empty and absent strings,
// duplicates, names of internal topics, a real batch for a partition that
// does not exist, member ids and generations other answers handed out.
// Requests go out pipelined, up to hostilePipelineMax before the first
// answer, as clients send them. It requires what Kafka promises: every
// request is answered, in order (a produce with acks=0 is not, or has its
// connection closed if it failed), with an answer that decodes, nothing
// panics or halts the node, and a topic the requests cannot name keeps
// every record it had and takes new ones. It found a JoinGroup naming a
// protocol twice panicking the coordinator.
func TestRequestsNoClientSendsAreAnsweredWithoutHarm(t *testing.T) {
	keys := clientListenerKeys()
	rapid.Check(t, func(rt *rapid.T) {
		config := DefaultConfig()
		config.GroupMaxSessionTimeout = hostileSessionTimeoutMax
		node := newTestNode(t, config)
		setup := node.connect()
		topicID := setup.createTopic(hostileTopic, hostilePartitions).TopicID
		for p := range int32(hostilePartitions) {
			setup.produce(hostileTopic, p, "a", "b")
		}
		setup.createTopic(keptTopic, 1)
		kept := []string{"before-1", "before-2"}
		setup.produce(keptTopic, 0, kept...)

		setup.findCoordinator(0, "g")
		node.run(100 * time.Millisecond) // the offsets partition loads

		f := &hostileFiller{rt: rt, topicIDs: [][16]byte{topicID}, batch: hostileBatch(node)}
		sendHostileRequests(rt, node, f, keys, false)

		after := node.connect()
		after.produce(keptTopic, 0, "after")
		kept = append(kept, "after")
		got, code, _ := after.fetchAll(keptTopic, 0, 0)
		if code != 0 || !slices.Equal(got, kept) {
			rt.Fatalf("%s after the requests: fetched %q (error %d), want %q", keptTopic, got, code, kept)
		}
		node.checkAlive()
	})
}

// sendHostileRequests draws up to hostileRequestsMax requests of the APIs
// keys, at any version the listener serves, filled by f, and sends them
// pipelined on a connection to the client listener or, with
// onController, the controller listener (a new one when the node closed
// the last), each as sendHostile requires. It returns the requests sent.
func sendHostileRequests(rt *rapid.T, node *testNode, f *hostileFiller, keys []int16, onController bool) []kmsg.Request {
	connect := node.connect
	if onController {
		connect = node.connectController
	}
	hostile := connect()
	var sent []kmsg.Request
	count := rapid.IntRange(1, hostileRequestsMax).Draw(rt, "requests")
	for i := 0; i < count; {
		// Clients pipeline: up to hostilePipelineMax requests go
		// out before the first answer is awaited.
		var pipeline []kmsg.Request
		for n := rapid.IntRange(1, hostilePipelineMax).Draw(rt, fmt.Sprintf("pipeline%d", i)); n > 0 && i < count; n, i = n-1, i+1 {
			key := rapid.SampledFrom(keys).Draw(rt, fmt.Sprintf("key%d", i))
			a := apis[key]
			req := kmsg.RequestForKey(key)
			req.SetVersion(rapid.Int16Range(a.advertisedMin, a.maxOn(onController)).Draw(rt, fmt.Sprintf("version%d", i)))
			f.fill(reflect.ValueOf(req).Elem(), fmt.Sprintf("request%d", i), "", 0)
			pipeline = append(pipeline, req)
		}
		if hostile.conn.closed {
			hostile = connect()
		}
		for _, resp := range sendHostile(rt, node, hostile, pipeline) {
			f.learned.learn(resp)
		}
		sent = append(sent, pipeline...)
	}
	return sent
}

// clientListenerKeys are the APIs a client listener serves, in key order.
func clientListenerKeys() []int16 {
	var keys []int16
	for _, a := range apis {
		if a != nil && a.servedOn(false) {
			keys = append(keys, a.key)
		}
	}
	slices.Sort(keys)
	return keys
}

// hostileBatch is a valid batch of two records, for the fields that
// carry records: a produce of garbage only reaches the batch checks,
// a real batch reaches the partition.
func hostileBatch(node *testNode) []byte {
	spec := batch.Spec{BaseTimestamp: node.machine.Clock.Now().UnixMilli(), ProducerID: batch.NoProducerID}
	spec.Records = []batch.Record{{Key: []byte("k"), Value: []byte("v1")}, {Value: []byte("v2")}}
	return batch.Build(spec)
}

// sendHostile sends requests on c back to back and requires an answer
// to each, in order, that decodes and carries its correlation id, all
// within hostileAnswerWaitMax each; it returns them. A produce with
// acks=0 gets no answer; if it failed, the connection is closed instead,
// and the requests after it go unanswered.
func sendHostile(rt *rapid.T, node *testNode, c *testClient, requests []kmsg.Request) []kmsg.Response {
	answersBefore := len(c.conn.sent)
	var answered []kmsg.Request // the requests to be answered, in order
	var correlations []int32
	hangUps := map[int]bool{} // answers awaited when an acks=0 produce went
	for _, req := range requests {
		c.correlation++
		c.handler.Frame(wire.AppendRequest(nil, c.correlation, "hostile", req))
		if produce, ok := req.(*kmsg.ProduceRequest); ok && produce.Acks == 0 {
			hangUps[len(answered)] = true
			continue
		}
		answered = append(answered, req)
		correlations = append(correlations, c.correlation)
	}
	k := node.kernel
	got := func() int { return len(c.conn.sent) - answersBefore }
	for want := 1; want <= len(answered); want++ {
		if !k.RunWhile(k.Now()+int64(hostileAnswerWaitMax), func() bool { return got() < want && !c.conn.closed && node.halted == nil }) {
			rt.Fatalf("%s was not answered within %v: %+v", describeRequest(answered[want-1]), hostileAnswerWaitMax, answered[want-1])
		}
		if node.halted != nil || c.conn.closed {
			break
		}
	}
	// A second to show what should not come: answers to acks=0, or twice.
	k.RunUntil(k.Now() + int64(time.Second))
	if node.halted != nil {
		rt.Fatalf("the requests %s halted the node: %v", describeRequests(requests), node.halted)
	}
	if got() > len(answered) {
		rt.Fatalf("%d answers to %s, want %d (none to acks=0)", got(), describeRequests(requests), len(answered))
	}
	if c.conn.closed && !hangUps[got()] {
		rt.Fatalf("the connection closed after %d answers to %s, and not for a failed acks=0 produce", got(), describeRequests(requests))
	}
	var responses []kmsg.Response
	for i := range got() {
		req := answered[i]
		correlation, resp, err := wire.DecodeResponse(c.conn.sent[answersBefore+i], req)
		if err != nil {
			rt.Fatalf("the answer to %s does not decode: %v", describeRequest(req), err)
		}
		if correlation != correlations[i] {
			rt.Fatalf("the answer to %s has correlation %d, want %d", describeRequest(req), correlation, correlations[i])
		}
		responses = append(responses, resp)
	}
	return responses
}

func describeRequest(req kmsg.Request) string {
	return fmt.Sprintf("%s v%d", kmsg.NameForKey(req.Key()), req.GetVersion())
}

func describeRequests(requests []kmsg.Request) string {
	names := make([]string, len(requests))
	for i, req := range requests {
		names[i] = describeRequest(req)
	}
	return "[" + strings.Join(names, ", ") + "]"
}

// hostileFiller fills a kmsg request's fields, recursively, with values
// drawn from rt: for most fields usually a value a well-behaved client
// might send (so that requests get past the first check to the code
// behind it), otherwise a boundary or any value of the field's type.
// It learns what answers hand out (member ids, generations, producer
// ids), so that a request can name them as a client would.
type hostileFiller struct {
	rt *rapid.T
	// topicIDs are the ids a uuid may get besides zero and one no
	// topic has.
	topicIDs [][16]byte
	batch    []byte
	learned  learnedValues
	// strings and integers, by field name, replace plausibleStrings and
	// plausibleIntegers for the fields they name.
	strings  map[string][]string
	integers map[string][]int64
	// oneElement makes an array hold one element three times in four,
	// as the node-to-node APIs' arrays do (one topic, one partition).
	oneElement bool
}

// learnedValues are what the broker's answers handed out.
type learnedValues struct {
	memberIDs                        []string
	generations, producerIDs, epochs []int64
}

// learn keeps what an answer hands out.
func (l *learnedValues) learn(resp kmsg.Response) {
	switch r := resp.(type) {
	case *kmsg.JoinGroupResponse:
		if r.MemberID != "" {
			l.memberIDs = append(l.memberIDs, r.MemberID)
		}
		l.generations = append(l.generations, int64(r.Generation))
	case *kmsg.InitProducerIDResponse:
		l.producerIDs = append(l.producerIDs, r.ProducerID)
		l.epochs = append(l.epochs, int64(r.ProducerEpoch))
	}
}

// plausibleIntegers are, by field name, values a client might send.
var plausibleIntegers = map[string][]int64{
	"Acks":                   {-1, 1, 0},
	"Partition":              {0, 1, 2},
	"NumPartitions":          {1, 2, 4},
	"Count":                  {4, 5},
	"ReplicationFactor":      {-1, 1},
	"FetchOffset":            {0, 1, 2},
	"Offset":                 {0, 1, 2, -1},
	"Timestamp":              {-1, -2, -3, 0},
	"LogStartOffset":         {-1, 0},
	"ReplicaID":              {-1},
	"SessionID":              {0},
	"SessionEpoch":           {-1, 0},
	"MaxBytes":               {1 << 20, 100},
	"PartitionMaxBytes":      {1 << 20, 100},
	"MinBytes":               {0, 1},
	"MaxWaitMillis":          {0, 100, 500},
	"TimeoutMillis":          {0, 100, 30_000},
	"SessionTimeoutMillis":   {6_000, 10_000, 45_000},
	"RebalanceTimeoutMillis": {1_000, 30_000},
	"CurrentLeaderEpoch":     {-1, 0, 1},
	"LeaderEpoch":            {-1, 0, 1},
	"LastFetchedEpoch":       {-1, 0},
	"IsolationLevel":         {0, 1},
	"CoordinatorType":        {0},
	"ResourceType":           {2, 4},
	"Op":                     {0, 1, 2, 3},
	"ElectionType":           {0, 1},
	"BaseSequence":           {0, 1},
}

// plausibleStrings are, by field name, strings a client might send.
var plausibleStrings = map[string][]string{
	"Topic":           {hostileTopic},
	"Topics":          {hostileTopic},
	"Group":           {"g"},
	"Groups":          {"g"},
	"CoordinatorKeys": {"g"},
	"ProtocolType":    {"consumer"},
	"Protocol":        {"range"},
	"ResourceName":    {hostileTopic, "1"},
	"Value":           {"1000", "compact", "delete"},
	"Name":            {hostileTopic, "range", "retention.ms", "cleanup.policy"},
}

var (
	tagsType  = reflect.TypeFor[kmsg.Tags]()
	uuidType  = reflect.TypeFor[[16]byte]()
	bytesType = reflect.TypeFor[[]byte]()
)

// absentByDefault are the nullable fields a consumer or an idempotent
// producer leaves null; one that is set reaches a refusal.
var absentByDefault = map[string]bool{"TransactionID": true, "GroupInstanceID": true, "Rack": true}

func (f *hostileFiller) fill(v reflect.Value, label, name string, depth int) {
	switch {
	case v.Type() == tagsType:
		return
	case v.Type() == uuidType:
		switch n := rapid.IntRange(0, len(f.topicIDs)+1).Draw(f.rt, label); {
		case n == 1:
			v.Index(0).SetUint(1)
		case n > 1:
			v.Set(reflect.ValueOf(f.topicIDs[n-2]))
		}
		return
	case v.Type() == bytesType:
		v.SetBytes(f.bytes(label, name))
		return
	}
	switch v.Kind() {
	case reflect.Struct:
		if depth >= hostileDepthMax {
			return
		}
		for i := range v.NumField() {
			field := v.Type().Field(i)
			if field.Name == "Version" || !field.IsExported() {
				continue
			}
			f.fill(v.Field(i), label+"."+field.Name, field.Name, depth+1)
		}
	case reflect.Pointer:
		absent := rapid.IntRange(0, 3).Draw(f.rt, label+"-absent") == 0
		if absentByDefault[name] {
			absent = !absent
		}
		if depth >= hostileDepthMax || absent {
			return
		}
		v.Set(reflect.New(v.Type().Elem()))
		f.fill(v.Elem(), label, name, depth+1)
	case reflect.Slice:
		if depth >= hostileDepthMax {
			return
		}
		n := 1
		if !f.oneElement || rapid.IntRange(0, 3).Draw(f.rt, label+"-one") == 0 {
			n = rapid.IntRange(-1, hostileSliceMax).Draw(f.rt, label+"-len")
		}
		if n < 0 {
			return // nil: a null array where the version allows one
		}
		s := reflect.MakeSlice(v.Type(), n, n)
		for i := range n {
			f.fill(s.Index(i), fmt.Sprintf("%s[%d]", label, i), name, depth+1)
		}
		v.Set(s)
	case reflect.String:
		v.Set(reflect.ValueOf(f.string(label, name)).Convert(v.Type()))
	case reflect.Bool:
		v.SetBool(rapid.Bool().Draw(f.rt, label))
	case reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(f.integer(label, name, v.Type().Bits()))
	case reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint(uint64(f.integer(label, name, 8)) & (1<<v.Type().Bits() - 1))
	case reflect.Float64:
		v.SetFloat(rapid.SampledFrom([]float64{-1, 0, 0.5, 1, math.NaN(), math.Inf(1)}).Draw(f.rt, label))
	}
}

// plausible reports whether this field gets a plausible value, if it has
// any: three times in four.
func (f *hostileFiller) plausible(label string, choices int) bool {
	return choices > 0 && rapid.IntRange(0, 3).Draw(f.rt, label+"-plausible") > 0
}

func (f *hostileFiller) string(label, name string) string {
	choices := plausibleStrings[name]
	if override, ok := f.strings[name]; ok {
		choices = override
	}
	if name == "MemberID" || name == "LeaderID" {
		choices = append([]string{""}, f.learned.memberIDs...)
	}
	if f.plausible(label, len(choices)) {
		return rapid.SampledFrom(choices).Draw(f.rt, label)
	}
	return rapid.SampledFrom(hostileStrings).Draw(f.rt, label)
}

// integer draws a value within the field's width.
func (f *hostileFiller) integer(label, name string, bits int) int64 {
	choices := plausibleIntegers[name]
	if override, ok := f.integers[name]; ok {
		choices = override
	}
	switch name {
	case "Generation":
		choices = append([]int64{-1}, f.learned.generations...)
	case "ProducerID":
		choices = append([]int64{-1}, f.learned.producerIDs...)
	case "ProducerEpoch":
		choices = append([]int64{-1}, f.learned.epochs...)
	}
	var n int64
	switch {
	case f.plausible(label, len(choices)):
		n = rapid.SampledFrom(choices).Draw(f.rt, label)
	case rapid.IntRange(0, 3).Draw(f.rt, label+"-any") == 0:
		n = rapid.Int64().Draw(f.rt, label)
	default:
		n = rapid.SampledFrom(hostileIntegers).Draw(f.rt, label)
	}
	if bits < 64 {
		limit := int64(1) << (bits - 1)
		n = max(min(n, limit-1), -limit)
	}
	return n
}

// bytes fills a byte field: records get a real batch, a group member's
// metadata and assignment their consumer encodings, any field may get
// nothing, nothing much or garbage.
func (f *hostileFiller) bytes(label, name string) []byte {
	var plausible []byte
	switch name {
	case "Records":
		plausible = slices.Clone(f.batch)
	case "Metadata":
		plausible = (&kmsg.ConsumerMemberMetadata{Topics: []string{hostileTopic}}).AppendTo(nil)
	case "MemberAssignment":
		assignment := kmsg.ConsumerMemberAssignment{Topics: []kmsg.ConsumerMemberAssignmentTopic{{Topic: hostileTopic, Partitions: []int32{0, 1}}}}
		plausible = assignment.AppendTo(nil)
	}
	if plausible != nil && f.plausible(label, 1) {
		return plausible
	}
	switch rapid.IntRange(0, 2).Draw(f.rt, label) {
	case 0:
		return nil
	case 1:
		return []byte{}
	}
	return rapid.SliceOfN(rapid.Byte(), 0, 80).Draw(f.rt, label+"-bytes")
}
