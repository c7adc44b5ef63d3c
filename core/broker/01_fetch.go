package broker

// Fetch (key 1), versions 4-12.
//
// Consumers read whole batches below each partition's high watermark, in
// request order, bounded by each partition's PartitionMaxBytes and the
// request's MaxBytes — except that the first batch of the answer is sent
// even when it alone is bigger (KIP-74), so a consumer never gets stuck. If
// fewer than MinBytes are ready, the fetch waits up to MaxWaitMillis (capped
// by Config.FetchWaitMax) for a high watermark it reads from to move.
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
// LastFetchedEpoch and DivergingEpoch for followers.
//
// On the controller listener, a Fetch of the metadata log
// (__cluster_metadata, by name or, from v13, by its fixed topic id) is the
// quorum's replication (KIP-595): it goes to the quorum (core/quorum),
// which may hold it as a long poll, and may use versions up to
// metadataFetchVersionMax, which clients are not offered.

import (
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"sluice/core"
	"sluice/core/quorum"
)

// metadataFetchVersionMax is the highest Fetch version served on the
// controller listener, for the quorum's fetches of the metadata log.
const metadataFetchVersionMax = 17

func init() {
	registerAPI(&api{key: 1, advertisedMin: 4, honouredMin: 4, max: 12, controllerListenerMax: metadataFetchVersionMax, handle: (*Broker).handleFetch})
}

// fetchBytesMax caps a fetch's MaxBytes (Kafka's fetch.max.bytes default is
// 55 MiB; the broker-side cap keeps one answer's memory bounded).
const fetchBytesMax = 64 << 20

func (b *Broker) handleFetch(x *exchange) {
	req := x.request.Body.(*kmsg.FetchRequest)
	if x.client.controllerListener && quorum.IsMetadataFetch(req) {
		b.quorum.HandleFetch(req, func(resp *kmsg.FetchResponse) { x.respond(resp) })
		return
	}
	if req.Version > 12 {
		// Only the quorum fetches above v12, and only the metadata
		// log; partition replication will serve the rest.
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
	if req.ReplicaID >= 0 {
		b.handleFollowerFetch(x, req)
		return
	}
	f := &pendingFetch{broker: b, exchange: x, request: req}
	if f.read() || req.MaxWaitMillis <= 0 {
		f.answer()
		return
	}
	wait := min(time.Duration(req.MaxWaitMillis)*time.Millisecond, b.config.FetchWaitMax)
	if !b.fetches.add(f, wait) {
		f.answer()
	}
}

// pendingFetch is a consumer fetch, read at least once and perhaps waiting
// for more data.
type pendingFetch struct {
	broker   *Broker
	exchange *exchange
	request  *kmsg.FetchRequest
	response *kmsg.FetchResponse
	timer    core.Timer
	done     bool
}

// read builds the answer from what the partitions hold now and reports
// whether it is worth sending already: enough bytes, or an error a client
// must hear about at once.
func (f *pendingFetch) read() (ready bool) {
	req := f.request
	resp := req.ResponseKind().(*kmsg.FetchResponse)
	budget := int(min(max(req.MaxBytes, 0), fetchBytesMax))
	if req.Version < 3 || req.MaxBytes == 0 {
		budget = fetchBytesMax
	}
	total := 0
	failed := false
	for _, t := range req.Topics {
		rt := kmsg.NewFetchResponseTopic()
		rt.Topic = t.Topic
		for _, rp := range t.Partitions {
			answer := kmsg.NewFetchResponseTopicPartition()
			answer.Partition = rp.Partition
			answer.HighWatermark = -1
			answer.LastStableOffset = -1
			answer.LogStartOffset = -1
			answer.PreferredReadReplica = -1
			// Never null: librdkafka (kcat) rejects a null record set
			// as "invalid MessageSetSize -1"; Kafka always sends bytes.
			answer.RecordBatches = []byte{}
			p, err := f.broker.leaderPartition(partitionKey{topic: t.Topic, partition: rp.Partition})
			if err != nil {
				answer.ErrorCode = errorCode(err)
				failed = true
				rt.Partitions = append(rt.Partitions, answer)
				continue
			}
			limit := min(int(max(rp.PartitionMaxBytes, 0)), budget-total)
			result, err := p.Read(rp.FetchOffset, limit, total == 0, rp.CurrentLeaderEpoch)
			answer.HighWatermark = result.HighWatermark
			answer.LastStableOffset = result.HighWatermark
			answer.LogStartOffset = result.LogStartOffset
			if err != nil {
				answer.ErrorCode = errorCode(err)
				failed = true
			} else if result.Records != nil {
				answer.RecordBatches = result.Records
				total += len(result.Records)
			}
			rt.Partitions = append(rt.Partitions, answer)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	f.response = resp
	return failed || total >= int(req.MinBytes) || total >= budget
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

// partitions lists the partitions the fetch reads.
func (f *pendingFetch) partitions() []partitionKey {
	var keys []partitionKey
	for _, t := range f.request.Topics {
		for _, p := range t.Partitions {
			keys = append(keys, partitionKey{topic: t.Topic, partition: p.Partition})
		}
	}
	return keys
}

// handleFollowerFetch answers a fetch from another broker's replica. Until
// replication exists, no partition has followers, so every partition is
// answered NOT_LEADER_OR_FOLLOWER... replaced by core/replica's follower
// protocol.
func (b *Broker) handleFollowerFetch(x *exchange, req *kmsg.FetchRequest) {
	resp := req.ResponseKind().(*kmsg.FetchResponse)
	for _, t := range req.Topics {
		rt := kmsg.NewFetchResponseTopic()
		rt.Topic = t.Topic
		for _, rp := range t.Partitions {
			answer := kmsg.NewFetchResponseTopicPartition()
			answer.Partition = rp.Partition
			answer.ErrorCode = kerr.NotLeaderForPartition.Code
			answer.RecordBatches = []byte{}
			rt.Partitions = append(rt.Partitions, answer)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	x.respond(resp)
}
