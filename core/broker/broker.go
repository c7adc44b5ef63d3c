package broker

import (
	"fmt"
	"log/slog"
	"time"

	"sluice/core"
	"sluice/core/controller"
	"sluice/core/metadata"
	"sluice/core/quorum"
	"sluice/core/replica"
)

// metadataLogDir is where the single-node quorum keeps the metadata log,
// named as KRaft names its log.
const metadataLogDir = "__cluster_metadata-0"

// Broker is one node: the request handling, the partitions it hosts, and
// (on a single node) the controller and the quorum of one.
type Broker struct {
	w         core.World
	log       *slog.Logger
	config    Config
	clusterID string

	// image is the broker's view of the committed metadata.
	image      *metadata.Image
	quorum     *quorum.Local
	controller *controller.Controller
	// replaying is set while the metadata log is replayed at start:
	// records only build the image, and partitions are opened once after.
	replaying bool

	partitions map[partitionKey]*replica.Partition
	clients    map[*client]struct{}
	fetches    *fetchWaiters

	producerIDs producerIDBlock
	brokerEpoch int64
	// groups is the consumer group coordinator and its offsets topic.
	groups groupCoordination

	retentionTimer core.Timer
	stopped        bool
	metrics        metrics
}

// partitionKey names a partition by topic name and index.
type partitionKey struct {
	topic     string
	partition int32
}

func (k partitionKey) String() string { return fmt.Sprintf("%s-%d", k.topic, k.partition) }

type metrics struct {
	requests map[int16]int64
}

// Start recovers the broker from its disk: the metadata log is replayed
// into the image, every partition this node hosts is opened (each log
// recovers), and the node registers itself with the controller. The broker
// serves requests from the moment Start returns.
func Start(w core.World, config Config) (*Broker, error) {
	b := &Broker{
		w:          w,
		log:        w.Log.With("node", config.NodeID),
		config:     config,
		image:      metadata.NewImage(),
		partitions: map[partitionKey]*replica.Partition{},
		clients:    map[*client]struct{}{},
		metrics:    metrics{requests: map[int16]int64{}},
	}
	b.fetches = newFetchWaiters(b)
	clusterID, err := loadOrCreateMetaProperties(w, config.NodeID)
	if err != nil {
		return nil, err
	}
	b.clusterID = clusterID
	b.controller = controller.New(w, controller.Config{
		DefaultPartitions:        config.DefaultPartitions,
		DefaultReplicationFactor: config.DefaultReplicationFactor,
		TopicDefaults:            config.TopicDefaults,
	}, nil)

	b.replaying = true
	q, err := quorum.OpenLocal(w, metadataLogDir, b.applyCommitted)
	if err != nil {
		return nil, err
	}
	b.replaying = false
	b.quorum = q
	b.controller.SetProposer(q)
	if err := b.removeStrayPartitionDirectories(); err != nil {
		return nil, err
	}
	if err := b.startGroups(); err != nil {
		return nil, err
	}
	for _, name := range b.image.TopicNames() {
		b.reconcileTopic(name)
	}
	b.register()
	b.scheduleRetention()
	b.log.Info("broker started", "cluster", b.clusterID, "topics", len(b.image.Topics), "metadata_offset", b.image.Offset)
	return b, nil
}

// applyCommitted is the quorum's CommitFunc: every committed metadata
// record, in order, reaches the controller's image and the broker's.
func (b *Broker) applyCommitted(offset int64, r metadata.Record) {
	if err := b.controller.Apply(offset, r); err != nil {
		b.w.Halt(fmt.Errorf("broker: controller cannot apply metadata: %w", err))
		return
	}
	var removed *metadata.Topic
	if r.RemoveTopic != nil {
		removed = b.image.TopicsByID[r.RemoveTopic.TopicID]
	}
	if err := b.image.Apply(offset, r); err != nil {
		b.w.Halt(fmt.Errorf("broker: cannot apply metadata: %w", err))
		return
	}
	if b.replaying {
		return
	}
	switch {
	case r.Partition != nil:
		b.reconcileTopic(b.image.TopicsByID[r.Partition.TopicID].Name)
	case r.PartitionChange != nil:
		b.reconcileTopic(b.image.TopicsByID[r.PartitionChange.TopicID].Name)
	case r.RemoveTopic != nil && removed != nil:
		b.removeTopic(removed)
	case r.Config != nil && r.Config.ResourceType == metadata.ResourceTopic:
		b.reconfigureTopic(r.Config.ResourceName)
	}
}

// scheduleRetention runs retention and producer-state expiry every
// RetentionCheckInterval, as Kafka's log cleaner does.
func (b *Broker) scheduleRetention() {
	b.retentionTimer = b.w.Clock.AfterFunc(b.config.RetentionCheckInterval, func() {
		if b.stopped {
			return
		}
		cutoff := b.w.Clock.Now().Add(-b.config.ProducerIDExpiration).UnixMilli()
		for _, key := range b.sortedPartitionKeys() {
			b.partitions[key].Maintain(cutoff)
		}
		b.scheduleRetention()
	})
}

// Shutdown stops serving, syncs every log and closes it, then calls done:
// a graceful stop (SIGTERM) loses nothing that was written.
func (b *Broker) Shutdown(done func()) {
	if b.stopped {
		done()
		return
	}
	b.stopped = true
	if b.retentionTimer != nil {
		b.retentionTimer.Stop()
	}
	b.groups.coordinator.Close()
	for c := range b.clients { // order-independent: closes every client
		c.close()
	}
	b.fetches.failAll()
	keys := b.sortedPartitionKeys()
	pending := len(keys)
	finish := func() {
		for _, key := range keys {
			b.partitions[key].Close()
		}
		b.quorum.Close()
		b.log.Info("broker stopped")
		done()
	}
	if pending == 0 {
		finish()
		return
	}
	const shutdownSyncWait = 30 * time.Second
	timeout := b.w.Clock.AfterFunc(shutdownSyncWait, func() {
		if pending > 0 {
			b.log.Warn("shutdown gave up waiting for syncs", "partitions", pending)
			pending = 0
			finish()
		}
	})
	for _, key := range keys {
		b.partitions[key].SyncThen(func() {
			if pending == 0 {
				return
			}
			pending--
			if pending == 0 {
				timeout.Stop()
				finish()
			}
		})
	}
}

// ClusterID is the cluster's id, as Metadata reports it.
func (b *Broker) ClusterID() string { return b.clusterID }
