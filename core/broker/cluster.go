package broker

// How one node takes part in the cluster, as KRaft arranges it (KIP-500,
// KIP-631):
//
//   - Every node is a member of the metadata quorum (core/quorum): a voter
//     when its roles include controller, an observer otherwise. The
//     quorum delivers committed records to applyCommitted, which feeds both
//     the controller's image and the broker's.
//   - The controller acts only while this node is the quorum leader:
//     leaderChanged activates and deactivates it.
//   - The broker registers with the active controller and heartbeats to it
//     (lifecycle.go); it takes up a leadership the metadata gives it only
//     while the controller has it registered at this process's epoch and
//     unfenced.
//   - Admin requests go to the active controller, over the network or by
//     a local call when it is this node (forwarding.go).
//   - Nodes reach one another's controller listener, served by the same
//     dispatch table as the client listener plus the node-to-node APIs
//     (ControllerAcceptor).

import (
	"encoding/base64"
	"fmt"
	"hash/fnv"
	"slices"
	"strconv"
	"strings"

	"sluice/core"
	"sluice/core/metadata"
)

// checkCluster refuses cluster settings no node could run with.
func (c Config) checkCluster() error {
	_, voter := c.Voters[c.NodeID]
	switch {
	case c.Roles.Controller && !voter:
		return fmt.Errorf("broker: node %d has the controller role but is not among the voters %s", c.NodeID, votersString(c.Voters))
	case !c.Roles.Controller && voter:
		return fmt.Errorf("broker: node %d is a voter (%s) but does not have the controller role", c.NodeID, votersString(c.Voters))
	case c.HeartbeatInterval >= c.SessionTimeout:
		return fmt.Errorf("broker: the heartbeat interval %v must be shorter than the session timeout %v", c.HeartbeatInterval, c.SessionTimeout)
	}
	if len(c.Voters) > 1 {
		for _, id := range sortedVoterIDs(c.Voters) {
			if c.Voters[id] == "" {
				return fmt.Errorf("broker: voter %d has no controller address", id)
			}
		}
	}
	return nil
}

// clusterIDToFormat is the cluster id a new data directory gets. A single
// node makes one up. The nodes of a cluster must agree on it without
// talking first, as `kafka-storage format --cluster-id` makes them agree,
// so it is derived from what they share: the voter set.
func (c Config) clusterIDToFormat() string {
	if len(c.Voters) <= 1 {
		return ""
	}
	h := fnv.New128a()
	h.Write([]byte(votersString(c.Voters)))
	return base64.RawURLEncoding.EncodeToString(h.Sum(nil))
}

// votersString writes voters as controller.quorum.voters does:
// "1@host:port,2@host:port", by id.
func votersString(voters map[int32]string) string {
	var parts []string
	for _, id := range sortedVoterIDs(voters) {
		parts = append(parts, strconv.Itoa(int(id))+"@"+voters[id])
	}
	return strings.Join(parts, ",")
}

func sortedVoterIDs(voters map[int32]string) []int32 {
	ids := make([]int32, 0, len(voters))
	for id := range voters {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}

// leaderChanged is the quorum's OnLeaderChange: the controller is active
// exactly while this node leads, and the broker's registration and
// heartbeats follow the new leader.
func (b *Broker) leaderChanged(leaderID, epoch int32) {
	b.log.Info("metadata quorum leader changed", "leader", leaderID, "epoch", epoch)
	if b.config.Roles.Controller {
		if leaderID == b.config.NodeID {
			b.controller.Activate(epoch)
		} else {
			b.controller.Deactivate()
		}
	}
	b.lifecycle.controllerChanged()
	b.alterPartitions.controllerChanged()
}

// mayLead reports whether this broker may take up the leaderships the
// metadata gives it: it is registered at this process's epoch and
// unfenced. Before that, the metadata it has may be older than its own
// registration, and the leaderships in it stale.
func (b *Broker) mayLead() bool {
	if !b.config.Roles.Broker || b.brokerEpoch == 0 {
		return false
	}
	self, registered := b.image.Brokers[b.config.NodeID]
	return registered && self.Epoch == b.brokerEpoch && !self.Fenced
}

// WhenReady calls done once this broker is registered and unfenced: it
// then leads what the metadata gives it and the cluster places replicas on
// it. A node that is not a broker is ready at once. done may run inside
// the call. A node opens its client listener only then, as a KRaft broker
// starts serving once it has caught up, so that a client's first
// CreateTopics is not refused for want of a live broker.
func (b *Broker) WhenReady(done func()) {
	if !b.config.Roles.Broker || b.mayLead() {
		done()
		return
	}
	b.readyWaiters = append(b.readyWaiters, done)
}

// maybeReady calls the WhenReady waiters once the broker is ready.
func (b *Broker) maybeReady() {
	if len(b.readyWaiters) == 0 || !b.mayLead() {
		return
	}
	waiters := b.readyWaiters
	b.readyWaiters = nil
	for _, done := range waiters {
		done()
	}
}

// actsOnImage reports whether the broker acts on its metadata image:
// opens its partitions, leads and follows them as the image says. Not
// while the metadata log is replayed at start, and not until the quorum
// has caught up: until it has delivered every record up to the first high
// watermark it learned from a leader. At start a node holds only its
// newest snapshot (a sole voter, its whole log), which can be older than
// what the node itself did before it stopped: a replica following a leader
// from an epoch the node has since seen end lets that stale leader count
// it in its ISR and acknowledge writes the real leader never had. Kafka's
// brokers publish no image before catching up either (the MetadataLoader).
// Nor once the broker has begun to stop: it takes up no role then, and
// opens or closes no partition under its stop's feet (cluster seed
// 6019205: a deletion applied while the stop waited for syncs).
func (b *Broker) actsOnImage() bool {
	return !b.replaying && !b.stopped && b.quorum.CaughtUp()
}

// metadataCaughtUp takes up what the image gives this node once the
// quorum has caught up (see actsOnImage).
func (b *Broker) metadataCaughtUp() {
	b.log.Info("metadata caught up; taking up partitions", "metadata_offset", b.image.Offset, "topics", len(b.image.Topics))
	b.reconcileAll()
	b.imageWaiters.check()
	b.maybeSetAsideStrayPartitionDirectories()
	b.maybeReady()
}

// reconcileAll reconciles every topic with the image: after start, a
// snapshot, and whenever this broker's own registration or fencing
// changes.
func (b *Broker) reconcileAll() {
	if !b.config.Roles.Broker {
		return
	}
	for _, name := range b.image.TopicNames() {
		b.reconcileTopicRoles(name)
	}
	b.fetchers.reconcile()
}

// controllerIDForClients is the controller id Metadata and DescribeCluster
// answer. Clients cannot reach KRaft controllers, so Kafka answers a live
// broker instead, and the broker forwards what clients send "to the
// controller". Sluice answers the node leading the quorum when it is also
// a live broker (combined nodes, the usual small cluster), which saves the
// forwarding hop; otherwise this broker, which forwards.
func (b *Broker) controllerIDForClients() int32 {
	if leader, _, known := b.quorum.Leader(); known {
		if broker, registered := b.image.Brokers[leader]; registered && !broker.Fenced {
			return leader
		}
	}
	return b.config.NodeID
}

// ControllerAcceptor serves the node's controller listener: the same
// dispatch table as Accept, plus the APIs only nodes send one another
// (the quorum's, BrokerRegistration, BrokerHeartbeat, AlterPartition, and
// Fetch of the metadata log).
func (b *Broker) ControllerAcceptor() core.Acceptor { return controllerAcceptor{b} }

type controllerAcceptor struct{ b *Broker }

func (a controllerAcceptor) Accept(c core.Conn) core.Handler {
	cl := a.b.accept(c)
	cl.controllerListener = true
	return cl
}

// snapshotter is the quorum's Snapshotter over this broker's images.
type snapshotter struct{ b *Broker }

// Snapshot is the broker's image as records. The controller's image is
// the same metadata, built from the same records.
func (s snapshotter) Snapshot() (int64, []metadata.Record) {
	return s.b.image.Offset, s.b.image.Records()
}

// Restore replaces both images with the snapshot's, then makes the
// partitions match: topics gone are removed, the others reconciled and
// reconfigured.
func (s snapshotter) Restore(lastOffset int64, records []metadata.Record) error {
	b := s.b
	img, err := metadata.ImageFromRecords(lastOffset, records)
	if err != nil {
		return err
	}
	controllerImage, err := metadata.ImageFromRecords(lastOffset, records)
	if err != nil {
		return err
	}
	b.controller.Restore(controllerImage)
	old := b.image
	b.image = img
	b.historyUnknown()
	b.log.Info("metadata restored from a snapshot", "offset", lastOffset, "records", len(records), "at_start", b.replaying)
	if !b.actsOnImage() {
		return nil
	}
	for _, name := range old.TopicNames() {
		t := old.Topics[name]
		if current, exists := img.TopicsByID[t.ID]; !exists || current.Name != t.Name {
			b.removeTopic(t)
		}
	}
	b.reconcileAll()
	for _, name := range img.TopicNames() {
		b.reconfigureTopic(name)
	}
	b.imageWaiters.check()
	b.maybeSetAsideStrayPartitionDirectories()
	b.maybeReady()
	return nil
}
