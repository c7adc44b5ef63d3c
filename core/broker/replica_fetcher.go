package broker

// The replica fetchers: this node's side of replication as a follower
// (Kafka's ReplicaFetcherManager and ReplicaFetcherThread). There is one
// fetch session per leader node, batching every partition this node
// follows from that leader into one Fetch (v15: topic ids, and the
// ReplicaState naming this broker and its broker epoch, KIP-903). Sessions
// run over a peer client of their own, one connection per leader, so that
// their long polls never hold up the node's other requests.
//
// A session has one Fetch out at a time. It waits MaxWait (500 ms by
// default, replica.fetch.wait.max.ms) for at least one byte, then hands
// each partition its answer (replica.HandleFetchAnswer) and fetches again
// once every partition is ready to: under the durable default a follower
// fetches from an offset only once everything below it is synced, because
// the leader counts that offset as held here, so the next Fetch goes out
// when the appends of the last answer are synced (group-committed
// together, one sync latency). A partition the leader refused (not the
// leader yet, another epoch) sits out replicaPartitionRetry; a failed
// request backs the whole session off.

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"sluice/core"
	"sluice/core/metadata"
	"sluice/core/peer"
	"sluice/core/replica"
)

// Limits and pacing of the replica fetchers.
const (
	// replicaFetchPartitionBytesMax is replica.fetch.max.bytes: what one
	// partition may bring in one answer (a bigger first batch still
	// comes whole, KIP-74). Kafka's default is 1 MiB, but a Kafka
	// follower fetches again at once, while a durable follower here
	// fetches again only once the last answer is synced: one round per
	// sync latency, so what a round may carry is the follower's
	// throughput bound (1 MiB per 10 ms fsync is 100 MB/s). A partition
	// that is behind catches up in as few rounds as this allows.
	replicaFetchPartitionBytesMax = 16 << 20
	// replicaFetchResponseBytesMax is replica.fetch.response.max.bytes
	// (Kafka's default 10 MiB), raised with the partition bound above so
	// that a session's answer still holds more than one full partition.
	replicaFetchResponseBytesMax = 32 << 20
	// replicaFetchTimeoutMargin is how much longer than MaxWait a fetch
	// may take before the connection is given up.
	replicaFetchTimeoutMargin = 5 * time.Second
	// replicaFetchBackoffMin and replicaFetchBackoffMax bound the wait
	// after a failed fetch (no connection, no answer), doubling in
	// between.
	replicaFetchBackoffMin = 50 * time.Millisecond
	replicaFetchBackoffMax = time.Second
	// replicaPartitionRetry is how long a partition the leader refused
	// sits out (Kafka's replica.fetch.backoff.ms is 1 s; the metadata that
	// settles such a refusal usually arrives within milliseconds).
	replicaPartitionRetry = 100 * time.Millisecond
	// replicaFetchVersion is the Fetch version followers send.
	replicaFetchVersion = 15
)

// replicaFetchers holds one fetch session per leader this node follows.
type replicaFetchers struct {
	b     *Broker
	peers *peer.Client
	// sessions are the running sessions, by leader id.
	sessions []*fetchSession
	stopped  bool
	// followed is reconcile's list of the partitions followed, kept
	// for the next call: it runs after every applied partition record.
	followed []followedPartition
}

// followedPartition is a partition this node follows, and its leader.
type followedPartition struct {
	leader int32
	key    partitionKey
}

func newReplicaFetchers(b *Broker) *replicaFetchers {
	return &replicaFetchers{
		b:     b,
		peers: peer.New(b.w, fmt.Sprintf("broker-%d-replica-fetcher", b.config.NodeID)),
	}
}

// reconcile gives every leader this node follows a session with the
// partitions it follows from it, and stops the sessions of leaders it
// follows nothing from any more.
func (r *replicaFetchers) reconcile() {
	if r.stopped {
		return
	}
	followed := r.followed[:0]
	for _, key := range r.b.sortedPartitionKeys() {
		if p := r.b.partitions[key]; p.IsFollower() {
			followed = append(followed, followedPartition{leader: p.Leader(), key: key})
		}
	}
	// By leader, each leader's partitions staying in key order.
	slices.SortStableFunc(followed, func(a, b followedPartition) int { return cmp.Compare(a.leader, b.leader) })
	r.followed = followed
	running := r.sessions[:0]
	for _, s := range r.sessions {
		if _, follows := slices.BinarySearchFunc(followed, s.leader, compareFollowedLeader); follows {
			running = append(running, s)
		} else {
			s.stop()
		}
	}
	clear(r.sessions[len(running):])
	r.sessions = running
	for start := 0; start < len(followed); {
		leader := followed[start].leader
		end := start + 1
		for end < len(followed) && followed[end].leader == leader {
			end++
		}
		s := r.session(leader)
		s.partitions = s.partitions[:0]
		for _, f := range followed[start:end] {
			s.partitions = append(s.partitions, f.key)
		}
		if registered, ok := r.b.image.Brokers[leader]; ok && (!s.addressed || registered.Host != s.host || registered.Port != s.port) {
			r.peers.SetAddress(leader, hostPort(registered.Host, registered.Port))
			s.addressed, s.host, s.port = true, registered.Host, registered.Port
		}
		s.kick()
		start = end
	}
}

func compareFollowedLeader(f followedPartition, leader int32) int {
	return cmp.Compare(f.leader, leader)
}

// session returns the leader's session, started if it has none.
func (r *replicaFetchers) session(leader int32) *fetchSession {
	i, running := slices.BinarySearchFunc(r.sessions, leader, compareSessionLeader)
	if !running {
		r.sessions = slices.Insert(r.sessions, i, newFetchSession(r, leader))
	}
	return r.sessions[i]
}

func compareSessionLeader(s *fetchSession, leader int32) int { return cmp.Compare(s.leader, leader) }

// ready is a partition's OnFetchReady: its session may send now.
func (r *replicaFetchers) ready(key partitionKey) {
	p, open := r.b.partitions[key]
	if !open || !p.IsFollower() {
		return
	}
	if i, running := slices.BinarySearchFunc(r.sessions, p.Leader(), compareSessionLeader); running {
		r.sessions[i].kick()
	}
}

// stop ends every session (shutdown).
func (r *replicaFetchers) stop() {
	r.stopped = true
	for _, s := range r.sessions {
		s.stop()
	}
	r.sessions = nil
	r.peers.Close()
}

// fetchSession fetches every partition this node follows from one leader.
type fetchSession struct {
	fetchers   *replicaFetchers
	leader     int32
	partitions []partitionKey
	// host and port are the leader's address last given to the peer
	// client, if addressed: reconcile skips building the same address
	// again.
	addressed bool
	host      string
	port      int32
	// rotation is where the next request starts in partitions, moving
	// on each time, so that partitions late in the list are not starved
	// by earlier ones filling the answer.
	rotation int
	// inFlight is set while a Fetch is out; scheduled while a send is
	// due on the loop; wake is the timer of a delayed partition's return
	// or of the backoff after a failure.
	inFlight  bool
	scheduled bool
	wake      core.Timer
	backoff   time.Duration
	delayed   map[partitionKey]partitionDelay
	stopped   bool

	// What one Fetch needs, kept from one to the next: a session has
	// one Fetch out at a time, and once its answer is handled nothing
	// holds its request (the peer client encodes it when it is sent and
	// keeps it only to decode the answer), the partitions sent, or the
	// maps that index them. Reusing them saves some six allocations per
	// round, and every follower fetches a round per produce.
	//
	// sent is the partitions of the Fetch out, in the order sent (or of
	// the last one, until the next is built: a partition closed
	// meanwhile is skipped, see answered); fetch is its request, and
	// answer where its answer is decoded (peer.Client.RequestInto, set
	// back to new for each);
	// topicIndex places a topic id in fetch.Topics while it is built;
	// answers finds a partition in the answer. sendFunc and onAnswer are
	// s.send and s.fetchAnswered, bound once rather than at every kick
	// and every Fetch.
	sent       []sentPartition
	fetch      kmsg.FetchRequest
	answer     kmsg.FetchResponse
	topicIndex map[metadata.TopicID]int
	answers    map[answerKey]*kmsg.FetchResponseTopicPartition
	sendFunc   func()
	onAnswer   func(kmsg.Response, error)
}

// answerKey names a partition of a Fetch answer: by topic id, since
// followers fetch with topic ids (v13+).
type answerKey struct {
	topic     [16]byte
	partition int32
}

func newFetchSession(r *replicaFetchers, leader int32) *fetchSession {
	s := &fetchSession{
		fetchers:   r,
		leader:     leader,
		delayed:    map[partitionKey]partitionDelay{},
		backoff:    replicaFetchBackoffMin,
		topicIndex: map[metadata.TopicID]int{},
		answers:    map[answerKey]*kmsg.FetchResponseTopicPartition{},
	}
	s.sendFunc = s.send
	s.onAnswer = s.fetchAnswered
	return s
}

// partitionDelay is a partition sitting out after a refusal, for as long
// as it follows the leader epoch it was refused in.
type partitionDelay struct {
	until       time.Duration
	leaderEpoch int32
}

// sentPartition is one partition of a Fetch out, and where it fetched
// from.
type sentPartition struct {
	key       partitionKey
	partition *replica.Partition
	position  replica.FetchPosition
}

// kick asks for a send on a later turn of the loop, unless one is due, a
// Fetch is out, the session backs off, or a partition still syncs its
// last answer (its OnFetchReady kicks again). Deferring lets the
// partitions a metadata change or a group commit readies in one turn go
// out in one Fetch.
func (s *fetchSession) kick() {
	if !s.mayKick() {
		return
	}
	s.scheduled = true
	s.fetchers.b.w.Clock.AfterFunc(0, s.sendFunc)
}

// kickNow sends at once if the session may, as kick would on the next
// turn: for the answer's callback, a quiet point where nothing else can
// become ready in the same turn, so deferring would only cost an event.
func (s *fetchSession) kickNow() {
	if s.mayKick() {
		s.send()
	}
}

func (s *fetchSession) mayKick() bool {
	return !s.stopped && !s.inFlight && !s.scheduled && s.wake == nil && !s.waitingForSync()
}

// waitingForSync reports whether a partition of the session is not ready
// to fetch: send would send nothing until its OnFetchReady.
func (s *fetchSession) waitingForSync() bool {
	now := s.fetchers.b.w.Clock.Elapsed()
	for _, key := range s.partitions {
		p, ours := s.follows(key)
		if !ours {
			continue
		}
		if _, out := s.sitsOut(key, p, now); out {
			continue
		}
		if _, ready := p.FetchPosition(); !ready {
			return true
		}
	}
	return false
}

// follows returns the partition key names if this node still follows it
// from the session's leader.
func (s *fetchSession) follows(key partitionKey) (*replica.Partition, bool) {
	p, open := s.fetchers.b.partitions[key]
	if !open || !p.IsFollower() || p.Leader() != s.leader {
		return nil, false
	}
	return p, true
}

// sitsOut reports until when a partition the leader refused sits out,
// forgetting a refusal that is over or was made in another leader epoch.
func (s *fetchSession) sitsOut(key partitionKey, p *replica.Partition, now time.Duration) (time.Duration, bool) {
	d, ok := s.delayed[key]
	if !ok {
		return 0, false
	}
	if d.leaderEpoch == p.LeaderEpoch() && now < d.until {
		return d.until, true
	}
	delete(s.delayed, key)
	return 0, false
}

// send sends the next Fetch, if every partition is ready: one still
// syncing its last appends holds the session back (it kicks when ready).
func (s *fetchSession) send() {
	s.scheduled = false
	if s.stopped || s.inFlight {
		return
	}
	b := s.fetchers.b
	now := b.w.Clock.Elapsed()
	sent := s.sent[:0]
	waiting := false
	nextReturn := time.Duration(-1)
	for i := range s.partitions {
		key := s.partitions[(s.rotation+i)%len(s.partitions)]
		p, ours := s.follows(key)
		if !ours {
			continue
		}
		if until, out := s.sitsOut(key, p, now); out {
			if nextReturn < 0 || until < nextReturn {
				nextReturn = until
			}
			continue
		}
		position, ready := p.FetchPosition()
		if !ready {
			waiting = true
			continue
		}
		sent = append(sent, sentPartition{key: key, partition: p, position: position})
	}
	s.sent = sent
	if waiting {
		return
	}
	if len(sent) == 0 {
		if nextReturn >= 0 {
			s.wakeAfter(nextReturn - now)
		}
		return
	}
	s.rotation++
	s.inFlight = true
	timeout := b.config.ReplicaFetchWaitMax + replicaFetchTimeoutMargin
	s.answer = kmsg.NewFetchResponse()
	s.fetchers.peers.RequestInto(s.leader, s.request(sent), &s.answer, timeout, s.onAnswer)
}

// fetchAnswered is the peer client's callback for the Fetch out (s.sent).
func (s *fetchSession) fetchAnswered(resp kmsg.Response, err error) {
	if s.stopped {
		return
	}
	s.inFlight = false
	if err == nil && resp.(*kmsg.FetchResponse).ErrorCode != 0 {
		err = kerr.ErrorForCode(resp.(*kmsg.FetchResponse).ErrorCode)
	}
	if err != nil {
		s.failed(err)
		return
	}
	s.backoff = replicaFetchBackoffMin
	s.answered(s.sent, resp.(*kmsg.FetchResponse))
	s.kickNow()
}

// request builds the Fetch for the partitions sent, in s.fetch: the last
// Fetch's request, answered and done with (see fetchSession).
func (s *fetchSession) request(sent []sentPartition) *kmsg.FetchRequest {
	b := s.fetchers.b
	req := &s.fetch
	// Every field as a new request has it, but the topics' arrays,
	// which are refilled below.
	topics := req.Topics[:0]
	*req = kmsg.NewFetchRequest()
	req.Version = replicaFetchVersion
	req.ReplicaState.ID = b.config.NodeID
	req.ReplicaState.Epoch = -1
	if b.brokerEpoch > 0 {
		req.ReplicaState.Epoch = b.brokerEpoch
	}
	req.MaxWaitMillis = int32(b.config.ReplicaFetchWaitMax / time.Millisecond)
	req.MinBytes = 1
	req.MaxBytes = replicaFetchResponseBytesMax
	req.SessionID, req.SessionEpoch = 0, -1
	// Topics in the order of their first partition sent, each with its
	// partitions in the order sent. A topic takes over the partition
	// array of the topic in its place in the last request.
	clear(s.topicIndex)
	for _, one := range sent {
		i, ok := s.topicOf(topics, one.partition.TopicID)
		if !ok {
			i = len(topics)
			if len(topics) >= topicScanMax {
				s.topicIndex[one.partition.TopicID] = i
			}
			var partitions []kmsg.FetchRequestTopicPartition
			if i < cap(topics) {
				partitions = topics[:i+1][i].Partitions[:0]
			}
			t := kmsg.NewFetchRequestTopic()
			t.Topic, t.TopicID = one.key.topic, one.partition.TopicID
			t.Partitions = partitions
			topics = append(topics, t)
		}
		t := &topics[i]
		rp := kmsg.NewFetchRequestTopicPartition()
		rp.Partition = one.key.partition
		rp.CurrentLeaderEpoch = one.position.CurrentLeaderEpoch
		rp.FetchOffset = one.position.FetchOffset
		rp.LastFetchedEpoch = one.position.LastFetchedEpoch
		rp.LogStartOffset = one.position.LogStartOffset
		rp.PartitionMaxBytes = replicaFetchPartitionBytesMax
		t.Partitions = append(t.Partitions, rp)
	}
	req.Topics = topics
	return req
}

// topicScanMax is how many topics request finds a topic among by
// scanning them; beyond, it indexes them in a map.
const topicScanMax = 8

// topicOf finds the topic id among the topics of the request being built:
// the last one first (the partitions sent come grouped by topic, but for
// where the rotation wraps), then by scanning the first topicScanMax, then
// in the map that indexes the rest.
func (s *fetchSession) topicOf(topics []kmsg.FetchRequestTopic, id [16]byte) (int, bool) {
	if n := len(topics); n > 0 && topics[n-1].TopicID == id {
		return n - 1, true
	}
	for i := range topics[:min(len(topics), topicScanMax)] {
		if topics[i].TopicID == id {
			return i, true
		}
	}
	if len(topics) <= topicScanMax {
		return 0, false
	}
	i, ok := s.topicIndex[id]
	return i, ok
}

// answered hands each partition its part of the answer.
func (s *fetchSession) answered(sent []sentPartition, resp *kmsg.FetchResponse) {
	b := s.fetchers.b
	inOrder := answeredInOrder(sent, resp)
	answers := s.answers
	if !inOrder {
		clear(answers)
		for i := range resp.Topics {
			t := &resp.Topics[i]
			for j := range t.Partitions {
				answers[answerKey{topic: t.TopicID, partition: t.Partitions[j].Partition}] = &t.Partitions[j]
			}
		}
	}
	topic, partition := 0, 0 // the next answer, when inOrder
	for _, one := range sent {
		var answer *kmsg.FetchResponseTopicPartition
		ok := true
		if inOrder {
			for len(resp.Topics[topic].Partitions) == partition {
				topic, partition = topic+1, 0
			}
			answer = &resp.Topics[topic].Partitions[partition]
			partition++
		} else {
			answer, ok = answers[answerKey{topic: one.partition.TopicID, partition: one.key.partition}]
		}
		if !ok || b.partitions[one.key] != one.partition {
			continue // unanswered, or the partition was closed meanwhile
		}
		err := one.partition.HandleFetchAnswer(one.position, replica.FetchAnswer{
			Error:              errorForCode(answer.ErrorCode),
			Records:            answer.RecordBatches,
			HighWatermark:      answer.HighWatermark,
			LogStartOffset:     answer.LogStartOffset,
			DivergingEpoch:     answer.DivergingEpoch.Epoch,
			DivergingEndOffset: answer.DivergingEpoch.EndOffset,
		})
		if err != nil {
			b.log.Debug("fetch from the leader refused", "partition", one.key, "leader", s.leader, "error", err)
			s.delayed[one.key] = partitionDelay{until: b.w.Clock.Elapsed() + replicaPartitionRetry, leaderEpoch: one.partition.LeaderEpoch()}
		}
	}
	clear(answers) // the answer's partitions go with the answer
}

// answeredInOrder reports whether the answer has exactly the partitions
// sent, in the order sent, as this broker's leaders answer: then the
// partitions are matched by position, without the map of answers by
// partition that an answer in another order needs.
func answeredInOrder(sent []sentPartition, resp *kmsg.FetchResponse) bool {
	i := 0
	for ti := range resp.Topics {
		t := &resp.Topics[ti]
		for pi := range t.Partitions {
			if i == len(sent) || t.TopicID != sent[i].partition.TopicID || t.Partitions[pi].Partition != sent[i].key.partition {
				return false
			}
			i++
		}
	}
	return i == len(sent)
}

// failed backs the session off after a Fetch that got no answer.
func (s *fetchSession) failed(err error) {
	s.fetchers.b.log.Debug("fetch from the leader failed", "leader", s.leader, "error", err, "backoff", s.backoff)
	s.wakeAfter(s.backoff)
	s.backoff = min(2*s.backoff, replicaFetchBackoffMax)
}

// wakeAfter sends again after d.
func (s *fetchSession) wakeAfter(d time.Duration) {
	if s.wake != nil {
		s.wake.Stop()
	}
	s.wake = s.fetchers.b.w.Clock.AfterFunc(d, func() {
		s.wake = nil
		s.kick()
	})
}

// stop ends the session: its answer in flight, if any, is ignored.
func (s *fetchSession) stop() {
	s.stopped = true
	if s.wake != nil {
		s.wake.Stop()
	}
}

// hostPort joins a host and port as a dialable address, bracketing an
// IPv6 host.
// (Concatenation rather than fmt: cheaper, and reconcile builds one
// whenever a leader followed is new or changed its address.)
func hostPort(host string, port int32) string {
	if strings.Contains(host, ":") {
		return "[" + host + "]:" + strconv.Itoa(int(port))
	}
	return host + ":" + strconv.Itoa(int(port))
}
