package broker

import (
	"errors"
	"fmt"
	"path"
	"slices"
	"strconv"
	"strings"

	"sluice/core/metadata"
	"sluice/core/replica"
)

// deletedSuffix marks a partition directory being removed: a deleted topic's
// directories are renamed first, so a topic of the same name can be created
// at once, and whatever a crash interrupts is finished at the next start.
const deletedSuffix = "-delete"

// straySuffix marks a partition directory set aside, not deleted: one the
// metadata does not place on this node, or one holding another topic id
// than the topic of its name. Either may be a deletion this disk never saw,
// or damage (a metadata log cut short, a partition.metadata overwritten),
// which must not cost the data; as Kafka does with stray logs since 3.7,
// the directory is renamed and kept for an operator to remove.
const straySuffix = "-stray"

// partitionDir names a partition's directory: "<topic>-<partition>".
// (Concatenation rather than fmt: every partition opened names its
// directory.)
func partitionDir(topic string, partition int32) string {
	return topic + "-" + strconv.Itoa(int(partition))
}

// reconcileTopic makes the partitions this node hosts match the image: it
// opens the ones it should host and gives each the role the metadata
// decided. This node leads a partition the metadata gives it only while it
// may lead at all (mayLead, cluster.go: registered at this process's epoch
// and unfenced); until then it follows nobody for that partition. Every
// other hosted partition follows its leader, and the replica fetchers are
// brought in line (replica_fetcher.go).
func (b *Broker) reconcileTopic(name string) {
	b.reconcileTopicRoles(name)
	b.fetchers.reconcile()
}

// reconcileTopicRoles is reconcileTopic without the fetchers.
func (b *Broker) reconcileTopicRoles(name string) {
	t, ok := b.image.Topics[name]
	if !ok || !b.config.Roles.Broker {
		return
	}
	mayLead := b.mayLead()
	for _, mp := range t.Partitions {
		if !hosts(mp, b.config.NodeID) {
			continue
		}
		key := partitionKey{topic: name, partition: mp.Index}
		p, open := b.partitions[key]
		if !open {
			p = b.openPartition(key, t)
			if p == nil {
				continue
			}
		}
		p.NoteUncleanElection(mp.UncleanEpoch)
		if mp.Leader == b.config.NodeID && mayLead {
			p.BecomeLeader(mp.LeaderEpoch, mp.PartitionEpoch, mp.Replicas, mp.ISR, b.formerLeadersOf(key, mp))
			continue
		}
		leader := mp.Leader
		if leader == b.config.NodeID {
			leader = -1 // not yet, or no longer, allowed to lead
		}
		wasLeader := p.IsLeader()
		p.BecomeFollower(leader, mp.LeaderEpoch, mp.PartitionEpoch, mp.Replicas, mp.ISR)
		if wasLeader {
			b.log.Debug("leadership moved away", "partition", key, "leader", mp.Leader)
			// Waiting consumers learn they must go elsewhere.
			b.fetches.wake(key)
		}
	}
	b.removeReassignedAway(t)
	b.reconcileOffsetsTopic(t)
}

// removeReassignedAway closes the topic's open partitions that a
// reassignment took off this node (see core/controller's reassign.go) and
// deletes their data: the replicas that stay hold everything committed,
// since a reassignment completes only once its whole target is in the
// ISR. The data stays while this broker is not registered and unfenced at
// its current epoch: its image may then be one its own metadata log
// replayed, a step of the history after which a later reassignment gave
// the partition back and this directory received what may now be the only
// copy. The stray check deletes it once the broker is unfenced, if the
// partition is still not here.
func (b *Broker) removeReassignedAway(t *metadata.Topic) {
	removed := false
	for _, key := range b.sortedPartitionKeys() {
		if key.topic != t.Name || int(key.partition) >= len(t.Partitions) || hosts(t.Partitions[key.partition], b.config.NodeID) {
			continue
		}
		if key.topic == metadata.ConsumerOffsetsTopic && b.groups.coordinator != nil {
			// Its groups go before the replica they write to.
			b.groups.coordinator.Unload(key.partition)
		}
		b.closePartition(key)
		if !b.mayLead() {
			b.log.Info("replica reassigned away; its data stays until this broker is unfenced", "partition", key)
			b.strayDirectoriesChecked = false
			continue
		}
		b.log.Info("replica reassigned away; deleting it", "partition", key)
		removed = b.removePartitionDirectory(partitionDir(key.topic, key.partition), t.ID) || removed
	}
	if removed {
		b.syncDataDirectory()
	}
}

// openPartition opens a hosted partition's replica and wires it to the
// broker: fetch long-polls, the group coordinator, the replica fetchers
// and the controller. It returns nil if the partition cannot be opened.
func (b *Broker) openPartition(key partitionKey, t *metadata.Topic) *replica.Partition {
	config, err := b.partitionConfig(key.topic)
	if err != nil {
		b.log.Error("bad topic config; partition not opened", "partition", key, "error", err)
		return nil
	}
	dir := partitionDir(key.topic, key.partition)
	identity := replica.Identity{Topic: key.topic, Index: key.partition, TopicID: t.ID, NodeID: b.config.NodeID}
	p, err := replica.Open(b.w, dir, identity, config)
	if other, stray := errors.AsType[*replica.OtherTopicIDError](err); stray {
		// Another topic id under this one's name: most likely a
		// deleted topic whose deletion never reached this disk (see
		// core/replica's topic_id_file.go), but a damaged
		// partition.metadata reads the same. The directory is set
		// aside, not deleted, and the partition starts afresh.
		b.log.Warn("setting aside a partition directory holding another topic id", "partition", key, "found_topic_id", other.Found, "topic_id", t.ID)
		if !b.setAside(dir, other.Found.String()) {
			return nil
		}
		b.syncDataDirectory()
		p, err = replica.Open(b.w, dir, identity, config)
	}
	if err != nil {
		b.log.Error("cannot open partition", "partition", key, "error", err)
		return nil
	}
	p.SetReplication(brokerReplication{b: b, key: key})
	p.OnLeadershipChange(b.imageWaiters.check)
	p.OnHighWatermark(func() { b.fetches.wakeConsumers(key) })
	p.OnLeaderAppend(func() { b.fetches.wakeFollowers(key) })
	p.OnFetchReady(func() { b.fetchers.ready(key) })
	b.watchOffsetsPartition(key, p)
	b.partitions[key] = p
	b.sortedKeys = nil
	return p
}

// topicSettledHere reports whether every replica of the topic this broker
// has open has taken up its directory (replica.Recovered): a new
// partition's replica writes its partition.metadata before it leads or
// follows, and an admin answer that waits for it lets a client of a
// single broker produce at once.
func (b *Broker) topicSettledHere(topic string) bool {
	for _, key := range b.sortedPartitionKeys() {
		if key.topic == topic && !b.partitions[key].Recovered() {
			return false
		}
	}
	return true
}

func hosts(p *metadata.Partition, node int32) bool {
	for _, r := range p.Replicas {
		if r == node {
			return true
		}
	}
	return false
}

// partitionConfig resolves a topic's settings from the image.
func (b *Broker) partitionConfig(topic string) (replica.Config, error) {
	config, err := replica.ConfigFrom(b.image.TopicConfigs(topic), b.config.TopicDefaults)
	config.ReplicaLagTimeMax = b.config.ReplicaLagTimeMax
	config.DepartedWatch = b.config.SessionTimeout
	return config, err
}

// reconfigureTopic applies a changed topic config to its open partitions.
func (b *Broker) reconfigureTopic(topic string) {
	config, err := b.partitionConfig(topic)
	if err != nil {
		b.log.Error("bad topic config; keeping the old one", "topic", topic, "error", err)
		return
	}
	for _, key := range b.sortedPartitionKeys() {
		if key.topic == topic {
			if err := b.partitions[key].SetConfig(config); err != nil {
				b.log.Error("cannot apply topic config", "partition", key, "error", err)
			}
		}
	}
}

// removeTopic closes a deleted topic's partitions and removes their data,
// and has the groups this node coordinates forget their offsets of it.
func (b *Broker) removeTopic(t *metadata.Topic) {
	b.offsetsTopicRemoved(t)
	b.groups.coordinator.TopicDeleted(t.Name)
	for _, key := range b.sortedPartitionKeys() {
		if key.topic != t.Name {
			continue
		}
		b.closePartition(key)
		b.removePartitionDirectory(partitionDir(key.topic, key.partition), t.ID)
	}
	b.fetchers.reconcile()
	b.syncDataDirectory()
}

// closePartition closes an open replica this node no longer hosts and
// lets its waiting long polls go (they find it gone).
func (b *Broker) closePartition(key partitionKey) {
	b.partitions[key].Close()
	delete(b.partitions, key)
	b.sortedKeys = nil
	b.fetches.wake(key)
}

// removePartitionDirectory deletes the directory of topic id's partition:
// renamed aside first, so that a crash part way leaves a directory
// finishInterruptedDeletions finishes rather than a partition with files
// missing, then emptied and removed. It reports whether the rename
// succeeded; the caller syncs the data directory.
func (b *Broker) removePartitionDirectory(dir string, id metadata.TopicID) bool {
	doomed := renamedPartitionDir(dir, id.String(), deletedSuffix)
	if err := b.w.FS.Rename(dir, doomed); err != nil {
		b.log.Warn("cannot rename a deleted partition's directory", "dir", dir, "error", err)
		return false
	}
	b.removeDirectory(doomed)
	return true
}

// removeDirectory deletes a partition directory and its files.
func (b *Broker) removeDirectory(dir string) {
	names, err := b.w.FS.ReadDir(dir)
	if err != nil {
		b.log.Warn("cannot list directory to remove", "dir", dir, "error", err)
		return
	}
	for _, name := range names {
		if err := b.w.FS.Remove(path.Join(dir, name)); err != nil {
			b.log.Warn("cannot remove file", "file", path.Join(dir, name), "error", err)
		}
	}
	if err := b.w.FS.Remove(dir); err != nil {
		b.log.Warn("cannot remove directory", "dir", dir, "error", err)
	}
}

// finishInterruptedDeletions removes the partition directories a crash
// left renamed for deletion (see removeTopic). It runs at start.
func (b *Broker) finishInterruptedDeletions() error {
	names, err := b.w.FS.ReadDir(".")
	if err != nil {
		return fmt.Errorf("broker: listing the data directory: %w", err)
	}
	removed := false
	for _, name := range names {
		if strings.HasSuffix(name, deletedSuffix) {
			b.removeDirectory(name)
			removed = true
		}
	}
	if removed {
		b.syncDataDirectory()
	}
	return nil
}

// maybeSetAsideStrayPartitionDirectories sets aside, once, the partition
// directories the metadata does not place on this node (a topic deleted
// while the node was down, or created by a record that never committed,
// or a metadata log cut short by damage: setAside keeps them).
// It waits until the broker is registered and unfenced: the controller
// unfences a broker only once its metadata has caught up with its
// registration, and before that the image replayed from this node's own
// metadata log may lack topics it hosts (a power loss can take the
// unsynced tail of that log), whose data must not be mistaken for strays.
func (b *Broker) maybeSetAsideStrayPartitionDirectories() {
	if b.strayDirectoriesChecked || !b.mayLead() {
		return
	}
	b.strayDirectoriesChecked = true
	names, err := b.w.FS.ReadDir(".")
	if err != nil {
		b.log.Warn("cannot list the data directory for stray partitions", "error", err)
		return
	}
	removed := false
	for _, name := range names {
		topic, partition, ok := parsePartitionDir(name)
		if !ok || name == metadataLogDir || strings.HasSuffix(name, deletedSuffix) {
			continue
		}
		if p, exists := b.image.Partition(topic, partition); exists && hosts(p, b.config.NodeID) {
			continue
		}
		if _, open := b.partitions[partitionKey{topic: topic, partition: partition}]; open {
			continue
		}
		b.log.Warn("setting aside a stray partition directory: the metadata does not place it on this node", "dir", name)
		removed = b.setAside(name, "") || removed
	}
	if removed {
		b.syncDataDirectory()
	}
}

// setAside renames a partition directory to "<dir>.<tag>-stray", where
// nothing reads it again: neither a partition of its name nor the start's
// scan, which parses no such name. tag is the topic id it holds when known,
// otherwise drawn. It reports whether the rename succeeded; the caller
// syncs the data directory.
func (b *Broker) setAside(dir, tag string) bool {
	if tag == "" {
		tag = fmt.Sprintf("%016x", b.w.Entropy.Uint64())
	}
	aside := renamedPartitionDir(dir, tag, straySuffix)
	if err := b.w.FS.Rename(dir, aside); err != nil {
		b.log.Warn("cannot set aside a partition directory", "dir", dir, "error", err)
		return false
	}
	return true
}

// fileNameBytesMax is the longest file name Linux file systems take
// (NAME_MAX).
const fileNameBytesMax = 255

// renamedPartitionDir names what a partition directory "<topic>-<p>" is
// renamed to when it is deleted or set aside: "<topic>-<p>.<tag><suffix>",
// with the topic shortened as much as the name needs to stay a file name,
// as Kafka's logDirNameWithSuffixCappedLength shortens it. A topic name may
// be 249 characters long, and its directory must be renamable whatever its
// length, or its deletion leaves the data behind and a topic of the same
// name created again can never open its partitions.
func renamedPartitionDir(dir, tag, suffix string) string {
	topic, partition, ok := parsePartitionDir(dir)
	if !ok {
		return dir + "." + tag + suffix // not a partition's: nothing to shorten by
	}
	ending := "-" + strconv.Itoa(int(partition)) + "." + tag + suffix
	return topic[:max(0, min(len(topic), fileNameBytesMax-len(ending)))] + ending
}

// syncDataDirectory makes removals in the data directory durable.
func (b *Broker) syncDataDirectory() {
	b.w.FS.SyncDir(".", func(err error) {
		if err != nil {
			b.w.Halt(fmt.Errorf("broker: syncing the data directory: %w", err))
		}
	})
}

// parsePartitionDir reads "<topic>-<partition>".
func parsePartitionDir(name string) (string, int32, bool) {
	i := strings.LastIndexByte(name, '-')
	if i <= 0 {
		return "", 0, false
	}
	partition, err := strconv.ParseInt(name[i+1:], 10, 32)
	if err != nil || partition < 0 {
		return "", 0, false
	}
	return name[:i], int32(partition), true
}

// sortedPartitionKeys lists the open partitions in a stable order. The
// list is kept until a partition opens or closes (openPartition and
// removeTopic drop it), since the replica fetchers walk it after every
// applied partition record; callers must not modify it. A caller that
// opens or closes partitions while walking it keeps walking the old list,
// which nothing changes: a new one is built on the next call.
func (b *Broker) sortedPartitionKeys() []partitionKey {
	if b.sortedKeys == nil {
		keys := make([]partitionKey, 0, len(b.partitions))
		for key := range b.partitions {
			keys = append(keys, key)
		}
		slices.SortFunc(keys, comparePartitionKeys)
		b.sortedKeys = keys
	}
	return b.sortedKeys
}

// comparePartitionKeys orders partitions by topic, then index.
func comparePartitionKeys(a, b partitionKey) int {
	if c := strings.Compare(a.topic, b.topic); c != 0 {
		return c
	}
	return int(a.partition) - int(b.partition)
}
