package broker

import (
	"cmp"
	"fmt"
	"log/slog"
	"slices"
	"time"

	"sluice/core"
	"sluice/core/controller"
	"sluice/core/metadata"
	"sluice/core/peer"
	"sluice/core/quorum"
	"sluice/core/replica"
	"sluice/core/wire"
)

// Waits at shutdown.
const (
	// shutdownSyncWait bounds the wait for the partitions' final syncs.
	shutdownSyncWait = 30 * time.Second
	// resignWaitMax bounds the wait for the quorum to hand over its
	// leadership.
	resignWaitMax = 2 * time.Second
)

// metadataLogDir is where the quorum keeps the metadata log, its
// quorum-state file and its snapshots, named as KRaft names its log.
const metadataLogDir = "__cluster_metadata-0"

// Broker is one node: the request handling, the partitions it hosts, its
// member of the metadata quorum, and its controller, which acts while the
// quorum has elected this node leader (cluster.go).
type Broker struct {
	w         core.World
	log       *slog.Logger
	config    Config
	clusterID string

	// image is the broker's view of the committed metadata.
	image  *metadata.Image
	quorum *quorum.Quorum
	// quorumPeers carries the quorum's own traffic to the other voters'
	// controller listeners; controllerChannel this broker's requests to
	// the active controller (registration, heartbeats, forwarded admin
	// requests), on connections of their own, as Kafka keeps its Raft
	// client and its broker-to-controller channels apart. One connection
	// answers in request order, so a metadata Fetch the leader holds as a
	// long poll would otherwise hold up a registration behind it, and the
	// registration's commit needs the next Fetch.
	quorumPeers       *peer.Client
	controllerChannel *peer.Client
	controller        *controller.Controller
	// formerLeaders are the leaders lately deposed, which a new leader
	// here waits for (former_leaders.go).
	formerLeaders formerLeaders
	// replaying is set while the metadata log is replayed at start:
	// records only build the image, and partitions are opened once after.
	replaying bool

	partitions map[partitionKey]*replica.Partition
	// sortedKeys caches sortedPartitionKeys; nil when it must be built
	// again (partitions.go).
	sortedKeys []partitionKey
	// fetchers replicate the partitions this node follows from their
	// leaders; alterPartitions carries its leaders' ISR proposals to the
	// controller (replication.go).
	fetchers        *replicaFetchers
	alterPartitions *alterPartitionSender
	isrShrinkTimer  core.Timer
	// clients are the open connections, each with the order it was
	// accepted in (clientsAccepted counts them), which is the order stop
	// closes them in.
	clients         map[*client]uint64
	clientsAccepted uint64
	fetches         *fetchWaiters
	// imageWaiters are answers waiting for the image to show what a
	// remote controller committed (image_waiters.go).
	imageWaiters *imageWaiters
	// encoder encodes every answer this broker sends, on the loop;
	// clientIDs are the client ids its connections named, which their
	// decoders share.
	encoder   wire.Encoder
	clientIDs wire.ClientIDs

	// strayDirectoriesChecked is set once this broker, caught up with
	// the metadata, has removed the partition directories it no longer
	// hosts (partitions.go).
	strayDirectoriesChecked bool

	producerIDs producerIDBlock
	// brokerEpoch is this process's registration, 0 until the
	// controller has answered (lifecycle.go).
	brokerEpoch int64
	lifecycle   *lifecycle
	// readyWaiters wait for this broker to be registered and unfenced
	// (WhenReady).
	readyWaiters []func()
	// groups is the consumer group coordinator and its offsets topic.
	groups groupCoordination

	retentionTimer core.Timer
	// shuttingDown is set when Shutdown begins (the controlled shutdown
	// runs first); stopped once the broker stops serving.
	shuttingDown bool
	stopped      bool
	metrics      metrics
}

// partitionKey names a partition by topic name and index.
type partitionKey struct {
	topic     string
	partition int32
}

func (k partitionKey) String() string { return fmt.Sprintf("%s-%d", k.topic, k.partition) }

type metrics struct {
	// requests counts the requests served, by API key.
	requests [apiKeyLimit]int64
}

// Start recovers the broker from its disk: the metadata quorum replays the
// metadata log (from its newest snapshot) into the image, every partition
// this node hosts is opened (each log recovers), and the node registers
// itself with the active controller. The broker serves requests from the
// moment Start returns; it leads partitions once the controller has
// unfenced it.
func Start(w core.World, config Config) (*Broker, error) {
	config = config.withClusterDefaults()
	if err := config.checkCluster(); err != nil {
		return nil, err
	}
	b := &Broker{
		w:          w,
		log:        w.Log.With("node", config.NodeID),
		config:     config,
		image:      metadata.NewImage(),
		partitions: map[partitionKey]*replica.Partition{},
		clients:    map[*client]uint64{},
	}
	b.fetches = newFetchWaiters(b)
	b.imageWaiters = newImageWaiters(b)
	b.fetchers = newReplicaFetchers(b)
	b.alterPartitions = newAlterPartitionSender(b)
	clusterID, formatted, err := loadOrCreateMetaProperties(w, config.NodeID, config.clusterIDToFormat())
	if err != nil {
		return nil, err
	}
	if _, voter := config.Voters[config.NodeID]; formatted && voter && len(config.Voters) > 1 {
		// Kafka refuses to start on a data directory nobody formatted;
		// Sluice formats it, so that a cluster starts with one command.
		// A voter that loses its disk then returns as a new one and votes
		// at once, and with a lagging voter it can elect a leader
		// without records committed before (KAFKA-14077).
		b.log.Warn("formatted an empty data directory for a voter of the metadata quorum: right for a new cluster, "+
			"but if this node held data before (a lost disk, a mistyped --data), committed metadata may be lost; "+
			"stop it and restore the directory", "voters", len(config.Voters))
	}
	b.clusterID = clusterID
	rebalanceEvery := config.LeaderImbalanceCheckInterval
	if config.AutoLeaderRebalanceDisabled {
		rebalanceEvery = 0
	}
	b.controller = controller.New(w, controller.Config{
		DefaultPartitions:            config.DefaultPartitions,
		DefaultReplicationFactor:     config.DefaultReplicationFactor,
		TopicDefaults:                config.TopicDefaults,
		SessionTimeout:               config.SessionTimeout,
		LeaderImbalanceCheckInterval: rebalanceEvery,
		LeadershipLease:              config.FetchTimeout / leadershipLeaseFetchTimeoutDivisor,
	}, nil)
	b.quorumPeers = peer.New(w, fmt.Sprintf("raft-client-%d", config.NodeID))
	b.controllerChannel = peer.New(w, fmt.Sprintf("broker-%d-to-controller", config.NodeID))
	for _, id := range sortedVoterIDs(config.Voters) {
		if id != config.NodeID {
			b.controllerChannel.SetAddress(id, config.Voters[id])
		}
	}

	b.historyUnknown()
	b.replaying = true
	q, err := quorum.Open(w, metadataLogDir, quorum.Config{
		NodeID:               config.NodeID,
		Voters:               config.Voters,
		ElectionTimeout:      config.ElectionTimeout,
		FetchTimeout:         config.FetchTimeout,
		RequestTimeout:       config.QuorumRequestTimeout,
		SnapshotEveryRecords: config.SnapshotEveryRecords,
	}, b.quorumPeers, snapshotter{b}, b.applyCommitted)
	b.replaying = false
	if err != nil {
		b.quorumPeers.Close()
		b.controllerChannel.Close()
		return nil, err
	}
	b.quorum = q
	b.controller.SetProposer(q)
	if err := b.finishInterruptedDeletions(); err != nil {
		b.abandonStart()
		return nil, err
	}
	if err := b.startGroups(); err != nil {
		b.abandonStart()
		return nil, err
	}
	if q.CaughtUp() {
		b.reconcileAll()
	} else {
		q.OnCaughtUp(b.metadataCaughtUp)
	}
	b.lifecycle = newLifecycle(b)
	q.OnLeaderChange(b.leaderChanged)
	if leader, epoch, known := q.Leader(); known {
		b.leaderChanged(leader, epoch)
	}
	if config.Roles.Broker {
		b.lifecycle.start()
	}
	b.scheduleRetention()
	b.scheduleISRShrinkCheck()
	b.log.Info("broker started", "cluster", b.clusterID, "topics", len(b.image.Topics), "metadata_offset", b.image.Offset,
		"voters", len(config.Voters), "broker", config.Roles.Broker, "controller", config.Roles.Controller)
	return b, nil
}

// abandonStart releases what a failed Start had opened.
func (b *Broker) abandonStart() {
	b.fetchers.stop()
	b.quorum.Close()
	b.quorumPeers.Close()
	b.controllerChannel.Close()
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
	b.noteDeposition(r)
	if err := b.image.Apply(offset, r); err != nil {
		b.w.Halt(fmt.Errorf("broker: cannot apply metadata: %w", err))
		return
	}
	if !b.actsOnImage() {
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
	case r.BrokerFence != nil && r.BrokerFence.BrokerID == b.config.NodeID,
		r.RegisterBroker != nil && r.RegisterBroker.BrokerID == b.config.NodeID:
		// Unfenced at last, or fenced: which leaderships this node
		// may take up changed.
		b.reconcileAll()
		b.maybeSetAsideStrayPartitionDirectories()
		b.maybeReady()
	case r.BrokerFence != nil && r.BrokerFence.Fenced, r.RegisterBroker != nil:
		b.formerLeadersMayHaveGone()
	case r.BrokerCaughtUp != nil:
		b.formerLeaderCaughtUp(r.BrokerCaughtUp.BrokerID)
	}
	b.imageWaiters.check()
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

// Shutdown stops the broker gracefully: a controlled shutdown first (the
// controller moves this broker's leaderships away while it still serves,
// lifecycle.go), then it stops serving, syncs every log and closes it,
// hands over the quorum's leadership if it has it, and calls done. A
// graceful stop (SIGTERM) loses nothing that was written.
func (b *Broker) Shutdown(done func()) {
	if b.shuttingDown {
		done()
		return
	}
	b.shuttingDown = true
	b.lifecycle.shutdown(func() { b.stop(done) })
}

// stop is the end of Shutdown.
func (b *Broker) stop(done func()) {
	b.stopped = true
	if b.retentionTimer != nil {
		b.retentionTimer.Stop()
	}
	if b.isrShrinkTimer != nil {
		b.isrShrinkTimer.Stop()
	}
	b.fetchers.stop()
	b.alterPartitions.stop()
	b.groups.coordinator.Close()
	// In the order they were accepted: closing one sends its FIN, which
	// a simulation traces.
	connected := make([]*client, 0, len(b.clients))
	for c := range b.clients {
		connected = append(connected, c)
	}
	if !b.w.Canaries.On(CanaryClosesInMapOrder) {
		slices.SortFunc(connected, func(x, y *client) int { return cmp.Compare(b.clients[x], b.clients[y]) })
	}
	for _, c := range connected {
		c.close()
	}
	b.fetches.failAll()
	b.imageWaiters.releaseAll()
	keys := b.sortedPartitionKeys()
	// The partitions themselves, not their keys: the metadata that may
	// still arrive while the syncs run takes up no roles (actsOnImage),
	// but one closed meanwhile must not be looked up again.
	closing := make([]*replica.Partition, len(keys))
	for i, key := range keys {
		closing[i] = b.partitions[key]
	}
	pending := len(keys)
	finish := func() {
		for _, p := range closing {
			p.Close()
		}
		b.closeQuorum(func() {
			b.log.Info("broker stopped")
			done()
		})
	}
	if pending == 0 {
		finish()
		return
	}
	timeout := b.w.Clock.AfterFunc(shutdownSyncWait, func() {
		if pending > 0 {
			b.log.Warn("shutdown gave up waiting for syncs", "partitions", pending)
			pending = 0
			finish()
		}
	})
	for _, p := range closing {
		p.SyncThen(func() {
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

// closeQuorum resigns the quorum's leadership if this node has it (so the
// others elect a new leader at once rather than after an election
// timeout), then closes the quorum and the controller.
func (b *Broker) closeQuorum(done func()) {
	closed := false
	closeAll := func() {
		if closed {
			return
		}
		closed = true
		b.controller.Close()
		b.quorum.Close()
		b.quorumPeers.Close()
		b.controllerChannel.Close()
		done()
	}
	timeout := b.w.Clock.AfterFunc(resignWaitMax, closeAll)
	b.quorum.Resign(func() {
		timeout.Stop()
		closeAll()
	})
}

// ClusterID is the cluster's id, as Metadata reports it.
func (b *Broker) ClusterID() string { return b.clusterID }
