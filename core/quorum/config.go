package quorum

import (
	"fmt"
	"sort"
	"time"
)

// MetadataTopic is the topic of the metadata log, as KRaft names it; its one
// partition is __cluster_metadata-0.
const MetadataTopic = "__cluster_metadata"

// MetadataTopicID is the metadata topic's fixed id, KRaft's
// Uuid.METADATA_TOPIC_ID ("AAAAAAAAAAAAAAAAAAAAAQ"), which Fetch v13+ names
// it by.
var MetadataTopicID = [16]byte{15: 1}

// Config is a quorum member's settings. Durations of zero take Kafka's
// defaults.
type Config struct {
	// NodeID is this node's id (node.id). A node whose id is not in Voters
	// is an observer: it replicates and applies the metadata log but never
	// votes or leads (a broker-only node in KRaft).
	NodeID int32

	// Voters maps each voter's id to its controller listener address
	// (controller.quorum.voters). One entry makes a single-node quorum,
	// which needs no network at all.
	Voters map[int32]string

	// ElectionTimeout is controller.quorum.election.timeout.ms (default
	// 1s): a voter that knows no leader waits a random time in [T, 2T],
	// drawn from the World's entropy, before it asks for (pre-)votes.
	ElectionTimeout time.Duration

	// FetchTimeout is controller.quorum.fetch.timeout.ms (default 2s): a
	// follower that has not heard from its leader this long starts a
	// pre-vote; a leader that has not been fetched from by a majority this
	// long resigns (check-quorum); and a voter refuses pre-votes while it
	// has heard from a leader within it.
	FetchTimeout time.Duration

	// RequestTimeout is controller.quorum.request.timeout.ms (default 2s):
	// how long a Vote, BeginQuorumEpoch, EndQuorumEpoch or FetchSnapshot
	// waits for its answer. A Fetch waits this plus its long-poll time.
	RequestTimeout time.Duration

	// SnapshotEveryRecords takes a snapshot of the metadata state once this
	// many offsets were committed since the last one (the analogue of
	// metadata.log.max.record.bytes.between.snapshots), then moves the log
	// start up to it. Zero never snapshots.
	SnapshotEveryRecords int
}

// Kafka's defaults.
const (
	electionTimeoutDefault = time.Second
	fetchTimeoutDefault    = 2 * time.Second
	requestTimeoutDefault  = 2 * time.Second
)

// withDefaults fills zero durations with Kafka's defaults.
func (c Config) withDefaults() Config {
	if c.ElectionTimeout == 0 {
		c.ElectionTimeout = electionTimeoutDefault
	}
	if c.FetchTimeout == 0 {
		c.FetchTimeout = fetchTimeoutDefault
	}
	if c.RequestTimeout == 0 {
		c.RequestTimeout = requestTimeoutDefault
	}
	return c
}

// validate reports the first setting out of its range.
func (c Config) validate() error {
	switch {
	case c.NodeID < 0:
		return fmt.Errorf("quorum: node id %d is negative", c.NodeID)
	case len(c.Voters) == 0:
		return fmt.Errorf("quorum: no voters")
	case len(c.Voters) > votersMax:
		return fmt.Errorf("quorum: %d voters, more than %d", len(c.Voters), votersMax)
	case c.ElectionTimeout < 0 || c.FetchTimeout < 0 || c.RequestTimeout < 0:
		return fmt.Errorf("quorum: negative timeout")
	case c.SnapshotEveryRecords < 0:
		return fmt.Errorf("quorum: SnapshotEveryRecords %d is negative", c.SnapshotEveryRecords)
	}
	for id := range c.Voters { // order-independent: a check per entry
		if id < 0 {
			return fmt.Errorf("quorum: voter id %d is negative", id)
		}
	}
	return nil
}

// sortedVoters returns the voter ids in increasing order.
func (c Config) sortedVoters() []int32 {
	ids := make([]int32, 0, len(c.Voters))
	for id := range c.Voters {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	return ids
}

// fetchWait is how long the leader holds a Fetch that found nothing new.
func (c Config) fetchWait() time.Duration {
	return min(fetchWaitMax, c.FetchTimeout/4)
}
