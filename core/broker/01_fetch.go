package broker

// Fetch (key 1), versions 4-15.
//
// Consumers (replica id -1) read whole batches below each partition's high
// watermark, in request order, bounded by each partition's
// PartitionMaxBytes and the request's MaxBytes — except that the first
// batch of the answer is sent even when it alone is bigger (KIP-74), so a
// consumer never gets stuck. If fewer than MinBytes are ready, the fetch
// waits up to MaxWaitMillis (capped by Config.FetchWaitMax) for a high
// watermark it reads from to move.
//
// Followers (a broker's replica id) read up to the log end, not the high
// watermark, and are checked against the leader's epochs
// (follower_fetch.go, replica.ServeFollowerFetch); their fetches
// long-poll too, and wake on every append; they learn the high watermark
// from the answers.
//
// Fetch sessions (KIP-227) are not cached: every answer carries session id
// 0, which KIP-227 defines as "no session", so clients keep sending full
// requests; a request naming a session id gets FETCH_SESSION_ID_NOT_FOUND.
// With no transactions, the last stable offset is the high watermark and
// read_committed reads the same as read_uncommitted.
//
// Version notes: v4 isolation level and LastStableOffset; v5 log start
// offsets; v7 sessions; v9 CurrentLeaderEpoch (KIP-320) fencing; v11 rack id
// (no follower fetching: PreferredReadReplica is always -1); v12 flexible,
// LastFetchedEpoch and DivergingEpoch for followers; v13 topic ids instead
// of names (KIP-516; an unknown id is UNKNOWN_TOPIC_ID); v15 ReplicaState
// (the follower's id and broker epoch, KIP-903) instead of ReplicaID.
//
// On the controller listener, a Fetch of the metadata log
// (__cluster_metadata, by name or, from v13, by its fixed topic id) is the
// quorum's replication (KIP-595): it goes to the quorum (core/quorum),
// which may hold it as a long poll, and may use versions up to
// metadataFetchVersionMax, which clients are not offered.

import (
	"iter"
	"slices"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"sluice/core"
	"sluice/core/metadata"
	"sluice/core/quorum"
)

// Fetch versions: partitions are served up to fetchVersionMax; only the
// quorum's fetches of the metadata log go higher, on the controller
// listener.
const (
	fetchVersionMax         = 15
	metadataFetchVersionMax = 17
)

// fetchKey is Fetch's key.
const fetchKey = 1

func init() {
	registerAPI(&api{key: fetchKey, advertisedMin: 4, honouredMin: 4, max: fetchVersionMax, controllerListenerMax: metadataFetchVersionMax, handle: (*Broker).handleFetch})
}

// fetchBytesMax caps a fetch's MaxBytes (Kafka's fetch.max.bytes default is
// 55 MiB; the broker-side cap keeps one answer's memory bounded).
const fetchBytesMax = 64 << 20

func (b *Broker) handleFetch(x *exchange) {
	req := x.request.Body.(*kmsg.FetchRequest)
	if x.client.controllerListener && quorum.IsMetadataFetch(req) {
		b.quorum.HandleFetch(req, x)
		return
	}
	if req.Version > fetchVersionMax {
		// Only the quorum fetches above fetchVersionMax, and only the
		// metadata log.
		resp := req.ResponseKind().(*kmsg.FetchResponse)
		resp.ErrorCode = kerr.UnsupportedVersion.Code
		x.respond(resp)
		return
	}
	if req.SessionID != 0 {
		resp := req.ResponseKind().(*kmsg.FetchResponse)
		resp.ErrorCode = kerr.FetchSessionIDNotFound.Code
		x.respond(resp)
		return
	}
	f := x.fetch // room made with the exchange, if any
	if f == nil {
		f = &pendingFetch{}
		f.reset()
	}
	f.broker, f.exchange, f.request = b, x, req
	f.replicaID, f.replicaEpoch = fetchingReplica(req)
	f.topics = b.resolveFetchTopics(f.topics[:0], req)
	if f.read() || req.MaxWaitMillis <= 0 {
		f.answer()
		return
	}
	wait := min(time.Duration(req.MaxWaitMillis)*time.Millisecond, b.config.FetchWaitMax)
	if b.w.Buggify.Hit(core.BuggifyBrokerFetchWaitShort) {
		// Legal: MaxWait is an upper bound, and Kafka answers a waiting
		// fetch early for its own reasons (a purgatory purge, a leader
		// change), so consumers and followers must take a short or
		// empty answer at any time and fetch again.
		wait = core.RandomDuration(b.w.Entropy, 0, wait)
	}
	if !b.fetches.add(f, wait) {
		f.answer()
	}
}

// fetchingReplica is who sent a Fetch: a follower's broker id and broker
// epoch (ReplicaState from v15, ReplicaID before, with no epoch), or -1
// for a consumer.
func fetchingReplica(req *kmsg.FetchRequest) (id int32, brokerEpoch int64) {
	if req.Version >= 15 {
		return req.ReplicaState.ID, req.ReplicaState.Epoch
	}
	return req.ReplicaID, -1
}

// fetchTopic is one topic of a Fetch, its name resolved (from v13 the
// request names topics by id).
type fetchTopic struct {
	request *kmsg.FetchRequestTopic
	name    string
	known   bool
}

// resolveFetchTopics appends the request's topics to topics, resolved.
func (b *Broker) resolveFetchTopics(topics []fetchTopic, req *kmsg.FetchRequest) []fetchTopic {
	topics = slices.Grow(topics, len(req.Topics))
	for i := range req.Topics {
		t := &req.Topics[i]
		resolved := fetchTopic{request: t, name: t.Topic, known: true}
		if req.Version >= 13 {
			topic, ok := b.image.TopicsByID[metadata.TopicID(t.TopicID)]
			resolved.known = ok
			if ok {
				resolved.name = topic.Name
			}
		}
		topics = append(topics, resolved)
	}
	return topics
}

// pendingFetch is a fetch, read at least once and perhaps waiting for
// more data.
type pendingFetch struct {
	broker   *Broker
	exchange *exchange
	request  *kmsg.FetchRequest
	topics   []fetchTopic
	// replicaID is the fetching follower's broker id, -1 for a consumer;
	// replicaEpoch its broker epoch, -1 when it sent none.
	replicaID int32
	done      bool
	// reading is set while read runs: a follower's read can move a high
	// watermark, whose listeners wake waiting fetches, and this one must
	// not be read again from inside its own read.
	reading bool
	// (The fields above pack into one word; the struct's size matters,
	// see partitionFetchExchange.)
	replicaEpoch int64
	response     *kmsg.FetchResponse
	timer        core.Timer
	// expire is the timer's callback (fetchWaiters.add), made once and
	// kept with the pendingFetch's room.
	expire func()
	// waitingOn is the fetchWaiters' lists the fetch waits in.
	waitingOn []*waitList

	// Room for the answer and its arrays, in the pendingFetch's own
	// allocation and kept from one fetch to the next when the exchange
	// is (see fetchExchange): topics, responseTopics and
	// responsePartitions start in the inline arrays, which hold a fetch
	// of one topic (most fetches: a consumer's of its topic, a
	// follower's of what it follows from one leader) and one partition
	// (over half of them), and keep whatever bigger arrays a fetch
	// needed since. Nothing outlives the pendingFetch: the answer is
	// encoded when it is sent.
	responseValue            kmsg.FetchResponse
	responseTopics           []kmsg.FetchResponseTopic
	responsePartitions       []kmsg.FetchResponseTopicPartition
	waitingOnInline          [1]*waitList
	topicsInline             [1]fetchTopic
	responseTopicsInline     [1]kmsg.FetchResponseTopic
	responsePartitionsInline [1]kmsg.FetchResponseTopicPartition
}

// reset readies a pendingFetch, new or done with, for a fetch, keeping
// its room.
func (f *pendingFetch) reset() {
	topics, responseTopics, responsePartitions, waitingOn := f.topics[:0], f.responseTopics, f.responsePartitions, f.waitingOn[:0]
	if topics == nil {
		topics = f.topicsInline[:0]
		responseTopics, responsePartitions = f.responseTopicsInline[:], f.responsePartitionsInline[:]
		waitingOn = f.waitingOnInline[:0]
	}
	*f = pendingFetch{
		topics: topics, responseTopics: responseTopics, responsePartitions: responsePartitions,
		waitingOn: waitingOn, expire: f.expire,
	}
}

// fromFollower reports whether a broker's replica sent the fetch.
func (f *pendingFetch) fromFollower() bool { return f.replicaID >= 0 }

// read builds the answer from what the partitions hold now and reports
// whether it is worth sending already: enough bytes, or something (an
// error, a divergence) a client or follower must hear about at once.
//
// A fetch that waits is read again on every wake and at its deadline. Its
// topics and partitions are the same each time, so the answer's layout is
// made on the first read (emptyResponse) and every read fills each
// partition's answer in place: the answer of a read that was not sent is
// overwritten, never seen.
func (f *pendingFetch) read() (ready bool) {
	f.reading = true
	defer func() { f.reading = false }()
	req := f.request
	if f.response == nil {
		f.response = f.emptyResponse()
	}
	// MaxBytes 0 is a budget of nothing, which the first batch still
	// overrides (KIP-74), as in Kafka: min(MaxBytes, fetch.max.bytes).
	budget := int(min(max(req.MaxBytes, 0), fetchBytesMax))
	total := 0
	urgent := false
	for ti, t := range f.topics {
		answers := f.response.Topics[ti].Partitions
		for i := range t.request.Partitions {
			rp := &t.request.Partitions[i]
			answer := &answers[i]
			*answer = kmsg.NewFetchResponseTopicPartition()
			answer.Partition = rp.Partition
			answer.HighWatermark = -1
			answer.LastStableOffset = -1
			answer.LogStartOffset = -1
			answer.PreferredReadReplica = -1
			// Never null: librdkafka (kcat) rejects a null record set
			// as "invalid MessageSetSize -1"; Kafka always sends bytes.
			answer.RecordBatches = []byte{}
			limit := min(int(max(rp.PartitionMaxBytes, 0)), budget-total)
			var read int
			var stop bool
			switch {
			case !t.known:
				answer.ErrorCode, stop = kerr.UnknownTopicID.Code, true
			case f.fromFollower():
				read, stop = f.readForFollower(t.name, rp, limit, total == 0, answer)
			default:
				read, stop = f.readForConsumer(t.name, rp, limit, total == 0, answer)
			}
			total += read
			urgent = urgent || stop
		}
	}
	// A budget spent is an answer now; an empty one (MaxBytes 0) with
	// nothing read still waits for MinBytes, as any fetch does.
	return urgent || total >= int(req.MinBytes) || total > 0 && total >= budget
}

// emptyResponse is the fetch's answer with a topic for each requested
// topic and a partition for each requested partition, in request order,
// for read to fill in.
func (f *pendingFetch) emptyResponse() *kmsg.FetchResponse {
	// As f.request.ResponseKind() would make it, in place.
	resp := &f.responseValue
	*resp = kmsg.NewFetchResponse()
	resp.Version = f.request.Version
	f.responseTopics = resized(f.responseTopics, len(f.topics))
	resp.Topics = f.responseTopics
	// Every topic's partitions in one array.
	partitionCount := 0
	for _, t := range f.topics {
		partitionCount += len(t.request.Partitions)
	}
	f.responsePartitions = resized(f.responsePartitions, partitionCount)
	partitions := f.responsePartitions
	for ti, t := range f.topics {
		rt := &resp.Topics[ti]
		*rt = kmsg.NewFetchResponseTopic()
		rt.Topic, rt.TopicID = t.request.Topic, t.request.TopicID
		n := len(t.request.Partitions)
		rt.Partitions, partitions = partitions[:n:n], partitions[n:]
	}
	return resp
}

// resized returns s with n elements, in its own array if it has the room;
// the elements are the caller's to set.
func resized[T any](s []T, n int) []T {
	if n <= cap(s) {
		return s[:n]
	}
	return make([]T, n)
}

// readForConsumer reads one partition below its high watermark into
// answer, and reports the bytes read and whether the answer must go at
// once (an error).
//
// Only a leader whose broker holds its lease from the controller
// (lifecycle.go, holdsLease) serves consumers. One cut off from the
// controller longer than that may already be fenced and replaced while it
// still believes it leads; clients whose metadata is as old as its own
// would read from it what its successor has since deleted (DeleteRecords,
// retention), or miss what was written there since. It answers
// NOT_LEADER_OR_FOLLOWER, and the client finds the new leader. Followers
// still fetch from it: what they copy commits only through the ISR.
func (f *pendingFetch) readForConsumer(topic string, rp *kmsg.FetchRequestTopicPartition, limit int, atLeastOne bool, answer *kmsg.FetchResponseTopicPartition) (int, bool) {
	p, err := f.broker.leaderPartition(partitionKey{topic: topic, partition: rp.Partition})
	if err == nil && !f.broker.lifecycle.holdsLease() {
		err = kerr.NotLeaderForPartition
	}
	if err != nil {
		answer.ErrorCode = errorCode(err)
		return 0, true
	}
	result, err := p.Read(rp.FetchOffset, limit, atLeastOne, rp.CurrentLeaderEpoch)
	answer.HighWatermark = result.HighWatermark
	answer.LastStableOffset = result.HighWatermark
	answer.LogStartOffset = result.LogStartOffset
	if err != nil {
		answer.ErrorCode = errorCode(err)
		return 0, true
	}
	records := readPastEmptyBatches(result.Records, limit, result.HighWatermark, func(offset int64, limit int) []byte {
		more, err := p.Read(offset, limit, false, rp.CurrentLeaderEpoch)
		if err != nil {
			return nil
		}
		return more.Records
	})
	if records != nil {
		answer.RecordBatches = withoutInnerEmptyBatches(records)
	}
	return len(records), false
}

// answer sends the fetch's answer once.
func (f *pendingFetch) answer() {
	if f.done {
		return
	}
	f.done = true
	if f.timer != nil {
		f.timer.Stop()
	}
	f.exchange.respond(f.response)
}

// partitions yields the partitions the fetch reads, the ones the waiters
// index it by when it parks and when it leaves. (Yielded rather than
// listed: a list cost an allocation for nearly every fetch.)
func (f *pendingFetch) partitions() iter.Seq[partitionKey] {
	return func(yield func(partitionKey) bool) {
		for _, t := range f.topics {
			if !t.known {
				continue
			}
			for _, p := range t.request.Partitions {
				if !yield(partitionKey{topic: t.name, partition: p.Partition}) {
					return
				}
			}
		}
	}
}
