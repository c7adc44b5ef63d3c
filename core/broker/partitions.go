package broker

import (
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

func partitionDir(topic string, partition int32) string {
	return fmt.Sprintf("%s-%d", topic, partition)
}

// reconcileTopic makes the partitions this node hosts match the image: it
// opens the ones it should host and applies each one's leadership, if this
// broker may lead at all (mayLead, cluster.go: registered and unfenced).
func (b *Broker) reconcileTopic(name string) {
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
		leads := mayLead && mp.Leader == b.config.NodeID
		if b.leading[key] && !leads {
			b.demote(key)
		}
		p, open := b.partitions[key]
		if !open {
			config, err := b.partitionConfig(name)
			if err != nil {
				b.log.Error("bad topic config; partition not opened", "partition", key, "error", err)
				continue
			}
			p, err = replica.Open(b.w, partitionDir(name, mp.Index), replica.Identity{
				Topic: name, Index: mp.Index, TopicID: t.ID, NodeID: b.config.NodeID,
			}, config)
			if err != nil {
				b.log.Error("cannot open partition", "partition", key, "error", err)
				continue
			}
			p.OnHighWatermark(func() { b.fetches.wake(key) })
			b.watchOffsetsPartition(key, p)
			b.partitions[key] = p
		}
		if leads {
			p.BecomeLeader(mp.LeaderEpoch, mp.PartitionEpoch, mp.Replicas, mp.ISR)
			b.leading[key] = true
		}
	}
	b.reconcileOffsetsTopic(t)
}

// demote closes a replica whose leadership the metadata moved away (or
// that this broker may no longer take up, being fenced); reconcileTopic
// then opens it again, leading nothing. core/replica has no follower role
// yet (partition replication brings it): closing is how the old
// leadership ends, and everything that waited on it (acks=all produces,
// long-polling fetches) is answered NOT_LEADER_OR_FOLLOWER, which clients
// retry against the new leader.
func (b *Broker) demote(key partitionKey) {
	delete(b.leading, key)
	p, open := b.partitions[key]
	if !open {
		return
	}
	b.log.Debug("leadership moved away", "partition", key)
	p.Close()
	delete(b.partitions, key)
	b.fetches.wake(key)
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
	return replica.ConfigFrom(b.image.TopicConfigs(topic), b.config.TopicDefaults)
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

// removeTopic closes a deleted topic's partitions and removes their data.
func (b *Broker) removeTopic(t *metadata.Topic) {
	b.offsetsTopicRemoved(t)
	for _, key := range b.sortedPartitionKeys() {
		if key.topic != t.Name {
			continue
		}
		b.partitions[key].Close()
		delete(b.partitions, key)
		delete(b.leading, key)
		b.fetches.wake(key)
		dir := partitionDir(key.topic, key.partition)
		doomed := fmt.Sprintf("%s.%s%s", dir, t.ID, deletedSuffix)
		if err := b.w.FS.Rename(dir, doomed); err != nil {
			b.log.Warn("cannot rename deleted partition", "partition", key, "error", err)
			continue
		}
		b.removeDirectory(doomed)
	}
	b.w.FS.SyncDir(".", func(err error) {
		if err != nil {
			b.w.Halt(fmt.Errorf("broker: syncing the data directory: %w", err))
		}
	})
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

// removeStrayPartitionDirectories finishes interrupted deletions and removes
// partition directories the metadata does not place on this node (a topic
// deleted, or created by a record that never committed).
func (b *Broker) removeStrayPartitionDirectories() error {
	names, err := b.w.FS.ReadDir(".")
	if err != nil {
		return fmt.Errorf("broker: listing the data directory: %w", err)
	}
	removed := false
	for _, name := range names {
		if name == metadataLogDir || name == metaPropertiesName {
			continue
		}
		if strings.HasSuffix(name, deletedSuffix) {
			b.removeDirectory(name)
			removed = true
			continue
		}
		topic, partition, ok := parsePartitionDir(name)
		if !ok {
			continue
		}
		if p, exists := b.image.Partition(topic, partition); exists && hosts(p, b.config.NodeID) {
			continue
		}
		b.log.Info("removing stray partition directory", "dir", name)
		b.removeDirectory(name)
		removed = true
	}
	if removed {
		b.w.FS.SyncDir(".", func(err error) {
			if err != nil {
				b.w.Halt(fmt.Errorf("broker: syncing the data directory: %w", err))
			}
		})
	}
	return nil
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

// sortedPartitionKeys lists the open partitions in a stable order.
func (b *Broker) sortedPartitionKeys() []partitionKey {
	keys := make([]partitionKey, 0, len(b.partitions))
	for key := range b.partitions {
		keys = append(keys, key)
	}
	slices.SortFunc(keys, comparePartitionKeys)
	return keys
}

// comparePartitionKeys orders partitions by topic, then index.
func comparePartitionKeys(a, b partitionKey) int {
	if c := strings.Compare(a.topic, b.topic); c != 0 {
		return c
	}
	return int(a.partition) - int(b.partition)
}
