package metadata

import (
	"fmt"
	"slices"
	"sort"
)

// Image is the metadata as of some offset of the metadata log: the result of
// applying every committed record up to it, in order.
type Image struct {
	// Offset is the metadata log offset of the last applied record, -1
	// before any.
	Offset int64

	Brokers    map[int32]*Broker
	Topics     map[string]*Topic
	TopicsByID map[TopicID]*Topic
	// Configs holds explicitly set configs per resource; defaults are the
	// caller's business (see Config in the broker).
	Configs map[ConfigResource]map[string]string

	// NextProducerID is the first producer id not yet handed out.
	NextProducerID int64
}

// Broker is a registered broker.
type Broker struct {
	ID            int32
	IncarnationID [16]byte
	Epoch         int64
	Host          string
	Port          int32
	Rack          string
	Fenced        bool
}

// Topic is a topic and its partitions, indexed by partition number.
type Topic struct {
	Name       string
	ID         TopicID
	Partitions []*Partition
}

// Partition is one partition's replication state.
type Partition struct {
	Topic          *Topic
	Index          int32
	Replicas       []int32
	ISR            []int32
	Leader         int32 // -1 when leaderless
	LeaderEpoch    int32
	PartitionEpoch int32
	// UncleanEpoch is the leader epoch of the latest leader chosen
	// outside the ISR, 0 if none ever was (see
	// PartitionChangeRecord.Unclean).
	UncleanEpoch int32
	// AddingReplicas and RemovingReplicas describe a reassignment in
	// progress (KIP-455), both empty when none is: Replicas is then the
	// target (TargetReplicas) followed by RemovingReplicas, and
	// AddingReplicas are the target's members that are new to the
	// partition. It completes once the ISR holds the whole target.
	AddingReplicas   []int32
	RemovingReplicas []int32
	// Deposed are the brokers that led the partition, lost the
	// leadership to a change that did not fence them (a preferred
	// election, a reassignment, a controlled shutdown), and have not
	// been fenced or registered again since: each may not have applied
	// the change yet and still serve the partition on its controller
	// lease. A new leader waits for them (core/replica, takeover.go); a
	// broker whose image comes from a snapshot learns them only here.
	Deposed []int32
}

// Reassigning reports whether a reassignment of p is in progress.
func (p *Partition) Reassigning() bool {
	return len(p.AddingReplicas) > 0 || len(p.RemovingReplicas) > 0
}

// TargetReplicas is the replica set p is moving to: its replicas without
// those a reassignment removes, in order (its replicas when none runs).
func (p *Partition) TargetReplicas() []int32 {
	target := make([]int32, 0, len(p.Replicas))
	for _, r := range p.Replicas {
		if !slices.Contains(p.RemovingReplicas, r) {
			target = append(target, r)
		}
	}
	return target
}

// checkReassignment checks that a reassignment's sets name replicas, each
// at most once, and none in both.
func checkReassignment(replicas, adding, removing []int32) error {
	for _, set := range [][]int32{replicas, adding, removing} {
		for i, r := range set {
			if slices.Contains(set[:i], r) {
				return fmt.Errorf("replica %d named twice in %v", r, set)
			}
		}
	}
	for _, r := range adding {
		if !slices.Contains(replicas, r) || slices.Contains(removing, r) {
			return fmt.Errorf("adding replica %d is not a replica %v, or is also being removed %v", r, replicas, removing)
		}
	}
	for _, r := range removing {
		if !slices.Contains(replicas, r) {
			return fmt.Errorf("removing replica %d is not a replica %v", r, replicas)
		}
	}
	if len(removing) == len(replicas) {
		return fmt.Errorf("a reassignment removes every replica %v", replicas)
	}
	return nil
}

// ConfigResource names what a config belongs to.
type ConfigResource struct {
	Type int8
	Name string
}

// NewImage is the empty image, before the first record.
func NewImage() *Image {
	return &Image{
		Offset:     -1,
		Brokers:    map[int32]*Broker{},
		Topics:     map[string]*Topic{},
		TopicsByID: map[TopicID]*Topic{},
		Configs:    map[ConfigResource]map[string]string{},
	}
}

// Apply applies one committed record found at offset. A record that cannot
// apply (a partition of an unknown topic, an epoch going back) means the log
// and the image disagree, which is a bug: Apply returns an error and the
// caller halts rather than serve wrong metadata.
func (img *Image) Apply(offset int64, r Record) error {
	if offset <= img.Offset {
		return fmt.Errorf("metadata: record at offset %d applied after %d", offset, img.Offset)
	}
	var err error
	switch {
	case r.RegisterBroker != nil:
		err = img.applyRegisterBroker(r.RegisterBroker)
	case r.BrokerCaughtUp != nil:
		err = img.applyBrokerCaughtUp(r.BrokerCaughtUp)
	case r.BrokerFence != nil:
		err = img.applyBrokerFence(r.BrokerFence)
	case r.Topic != nil:
		err = img.applyTopic(r.Topic)
	case r.Partition != nil:
		err = img.applyPartition(r.Partition)
	case r.PartitionChange != nil:
		err = img.applyPartitionChange(r.PartitionChange)
	case r.RemoveTopic != nil:
		err = img.applyRemoveTopic(r.RemoveTopic)
	case r.Config != nil:
		img.applyConfig(r.Config)
	case r.ProducerIDs != nil:
		err = img.applyProducerIDs(r.ProducerIDs)
	case r.NoOp != nil:
		// Nothing to change: its commitment is the point.
	default:
		err = fmt.Errorf("metadata: empty record")
	}
	if err != nil {
		return fmt.Errorf("metadata: offset %d: %w", offset, err)
	}
	img.Offset = offset
	return nil
}

func (img *Image) applyRegisterBroker(r *RegisterBrokerRecord) error {
	if old, ok := img.Brokers[r.BrokerID]; ok && r.BrokerEpoch <= old.Epoch {
		return fmt.Errorf("broker %d epoch %d does not advance past %d", r.BrokerID, r.BrokerEpoch, old.Epoch)
	}
	img.forgetDeposed(r.BrokerID)
	img.Brokers[r.BrokerID] = &Broker{
		ID: r.BrokerID, IncarnationID: r.IncarnationID, Epoch: r.BrokerEpoch,
		Host: r.Host, Port: r.Port, Rack: r.Rack,
		// A newly registered broker is fenced until it has caught up
		// with the metadata log and asks to be unfenced (KIP-631).
		Fenced: true,
	}
	return nil
}

func (img *Image) applyBrokerFence(r *BrokerFenceRecord) error {
	b, ok := img.Brokers[r.BrokerID]
	if !ok {
		return fmt.Errorf("fence of unknown broker %d", r.BrokerID)
	}
	if b.Epoch != r.BrokerEpoch {
		return fmt.Errorf("fence of broker %d epoch %d, registered epoch is %d", r.BrokerID, r.BrokerEpoch, b.Epoch)
	}
	b.Fenced = r.Fenced
	if r.Fenced {
		img.forgetDeposed(r.BrokerID)
	}
	return nil
}

func (img *Image) applyBrokerCaughtUp(r *BrokerCaughtUpRecord) error {
	b, ok := img.Brokers[r.BrokerID]
	if !ok || b.Epoch != r.BrokerEpoch {
		return fmt.Errorf("broker %d epoch %d caught up, but it is not registered at that epoch", r.BrokerID, r.BrokerEpoch)
	}
	img.forgetDeposed(r.BrokerID)
	return nil
}

// Deposes reports whether broker id is deposed from any partition.
func (img *Image) Deposes(id int32) bool {
	// order-independent: whether any partition names it.
	for _, t := range img.TopicsByID {
		for _, p := range t.Partitions {
			if slices.Contains(p.Deposed, id) {
				return true
			}
		}
	}
	return false
}

func (img *Image) applyTopic(r *TopicRecord) error {
	if _, exists := img.Topics[r.Name]; exists {
		return fmt.Errorf("topic %q already exists", r.Name)
	}
	if _, exists := img.TopicsByID[r.ID]; exists || r.ID.IsZero() {
		return fmt.Errorf("topic id %s is zero or taken", r.ID)
	}
	t := &Topic{Name: r.Name, ID: r.ID}
	img.Topics[r.Name] = t
	img.TopicsByID[r.ID] = t
	return nil
}

func (img *Image) applyPartition(r *PartitionRecord) error {
	t, ok := img.TopicsByID[r.TopicID]
	if !ok {
		return fmt.Errorf("partition of unknown topic %s", r.TopicID)
	}
	if int(r.Partition) != len(t.Partitions) {
		return fmt.Errorf("topic %q: partition %d created out of order (have %d)", t.Name, r.Partition, len(t.Partitions))
	}
	if len(r.Replicas) == 0 {
		return fmt.Errorf("topic %q partition %d: no replicas", t.Name, r.Partition)
	}
	if err := checkReassignment(r.Replicas, r.AddingReplicas, r.RemovingReplicas); err != nil {
		return fmt.Errorf("topic %q partition %d: %w", t.Name, r.Partition, err)
	}
	t.Partitions = append(t.Partitions, &Partition{
		Topic:            t,
		Index:            r.Partition,
		Replicas:         slices.Clone(r.Replicas),
		ISR:              slices.Clone(r.ISR),
		Leader:           r.Leader,
		LeaderEpoch:      r.LeaderEpoch,
		PartitionEpoch:   r.PartitionEpoch,
		UncleanEpoch:     r.UncleanEpoch,
		AddingReplicas:   slices.Clone(r.AddingReplicas),
		RemovingReplicas: slices.Clone(r.RemovingReplicas),
		Deposed:          slices.Clone(r.Deposed),
	})
	return nil
}

func (img *Image) applyPartitionChange(r *PartitionChangeRecord) error {
	p, err := img.partitionByID(r.TopicID, r.Partition)
	if err != nil {
		return err
	}
	if r.Replicas == nil && (r.AddingReplicas != nil || r.RemovingReplicas != nil) {
		return fmt.Errorf("topic %q partition %d: a reassignment without its replicas", p.Topic.Name, p.Index)
	}
	if r.Replicas != nil {
		if len(r.Replicas) == 0 {
			return fmt.Errorf("topic %q partition %d: no replicas", p.Topic.Name, p.Index)
		}
		if err := checkReassignment(r.Replicas, r.AddingReplicas, r.RemovingReplicas); err != nil {
			return fmt.Errorf("topic %q partition %d: %w", p.Topic.Name, p.Index, err)
		}
	}
	newLeader := r.Leader != nil && *r.Leader != p.Leader && *r.Leader >= 0
	if r.Unclean && !newLeader {
		return fmt.Errorf("topic %q partition %d: an unclean election without a new leader", p.Topic.Name, p.Index)
	}
	if r.Leader != nil {
		img.noteDeposed(p, *r.Leader)
		// A record naming the leader it already has bumps the epoch
		// all the same, as Kafka's does: the controller fences the
		// replicas a reassignment removes so.
		p.Leader = *r.Leader
		p.LeaderEpoch++
	}
	if r.Unclean {
		p.UncleanEpoch = p.LeaderEpoch
	}
	if r.ISR != nil {
		p.ISR = slices.Clone(r.ISR)
	}
	if r.Replicas != nil {
		p.Replicas = slices.Clone(r.Replicas)
		p.AddingReplicas = slices.Clone(r.AddingReplicas)
		p.RemovingReplicas = slices.Clone(r.RemovingReplicas)
	}
	p.PartitionEpoch++
	return nil
}

// noteDeposed records p's leader as deposed when leader replaces it and
// its broker is unfenced (a fenced one's lease is over), and leader as
// deposed no more.
func (img *Image) noteDeposed(p *Partition, leader int32) {
	if old := p.Leader; old >= 0 && old != leader && !slices.Contains(p.Deposed, old) {
		if b, registered := img.Brokers[old]; registered && !b.Fenced {
			p.Deposed = append(p.Deposed, old)
		}
	}
	if i := slices.Index(p.Deposed, leader); i >= 0 {
		p.Deposed = slices.Delete(slices.Clone(p.Deposed), i, i+1)
	}
}

// forgetDeposed drops broker id from every partition's Deposed: it was
// fenced (a session after its last heartbeat, when its lease is over, or
// at the end of a controlled shutdown, once it has applied what deposed
// it), it caught up, or a new process of it registered (the old one is
// gone: a node runs one process at a time, and the controller refuses a
// second incarnation while the first still heartbeats).
func (img *Image) forgetDeposed(id int32) {
	// order-independent: each partition's list changes on its own.
	for _, t := range img.TopicsByID {
		for _, p := range t.Partitions {
			if i := slices.Index(p.Deposed, id); i >= 0 {
				p.Deposed = slices.Delete(slices.Clone(p.Deposed), i, i+1)
			}
		}
	}
}

func (img *Image) applyRemoveTopic(r *RemoveTopicRecord) error {
	t, ok := img.TopicsByID[r.TopicID]
	if !ok {
		return fmt.Errorf("removal of unknown topic %s", r.TopicID)
	}
	delete(img.TopicsByID, t.ID)
	delete(img.Topics, t.Name)
	delete(img.Configs, ConfigResource{Type: ResourceTopic, Name: t.Name})
	return nil
}

func (img *Image) applyConfig(r *ConfigRecord) {
	resource := ConfigResource{Type: r.ResourceType, Name: r.ResourceName}
	configs := img.Configs[resource]
	if r.Value == nil {
		delete(configs, r.Name)
		if len(configs) == 0 {
			delete(img.Configs, resource)
		}
		return
	}
	if configs == nil {
		configs = map[string]string{}
		img.Configs[resource] = configs
	}
	configs[r.Name] = *r.Value
}

func (img *Image) applyProducerIDs(r *ProducerIDsRecord) error {
	if r.NextProducerID <= img.NextProducerID {
		return fmt.Errorf("producer id block end %d does not advance past %d", r.NextProducerID, img.NextProducerID)
	}
	img.NextProducerID = r.NextProducerID
	return nil
}

func (img *Image) partitionByID(id TopicID, partition int32) (*Partition, error) {
	t, ok := img.TopicsByID[id]
	if !ok {
		return nil, fmt.Errorf("unknown topic %s", id)
	}
	if partition < 0 || int(partition) >= len(t.Partitions) {
		return nil, fmt.Errorf("topic %q has no partition %d", t.Name, partition)
	}
	return t.Partitions[partition], nil
}

// Partition finds a partition by topic name and index.
func (img *Image) Partition(topic string, partition int32) (*Partition, bool) {
	t, ok := img.Topics[topic]
	if !ok || partition < 0 || int(partition) >= len(t.Partitions) {
		return nil, false
	}
	return t.Partitions[partition], true
}

// TopicNames lists topic names, sorted.
func (img *Image) TopicNames() []string {
	names := make([]string, 0, len(img.Topics))
	for name := range img.Topics {
		names = append(names, name)
	}
	sort.Strings(names)
	return names
}

// BrokerIDs lists registered broker ids, sorted.
func (img *Image) BrokerIDs() []int32 {
	ids := make([]int32, 0, len(img.Brokers))
	for id := range img.Brokers {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}

// TopicConfigs returns a topic's explicitly set configs (nil if none). The
// map belongs to the image: do not modify it.
func (img *Image) TopicConfigs(topic string) map[string]string {
	return img.Configs[ConfigResource{Type: ResourceTopic, Name: topic}]
}
