package scenario

import (
	"fmt"
	"regexp"
	"slices"
	"time"
)

// clientNamePattern is what a client or group name may look like: a host
// name on the simulated network (no colon), not one of the nodes'.
var (
	clientNamePattern = regexp.MustCompile(`^[a-z][a-z0-9-]*$`)
	nodeNamePattern   = regexp.MustCompile(`^n[0-9]+$`)
	topicNamePattern  = regexp.MustCompile(`^[a-zA-Z0-9._-]+$`)
)

// reservedClientNames are host names the cluster workload uses itself.
var reservedClientNames = []string{"admin", "setup", "drain", "any"}

// Validate reports the first thing wrong with s, or nil.
func (s Scenario) Validate() error {
	if s.Workload != WorkloadCluster {
		if s.Workload == "" {
			return fmt.Errorf("scenario: no workload")
		}
		return s.validateCommon()
	}
	checks := []func() error{
		s.validateCommon,
		s.validateCluster,
		s.validateTopics,
		s.validateClients,
		s.validateTimeouts,
		s.validateConditions,
		s.validateFaults,
		s.validatePhases,
	}
	for _, check := range checks {
		if err := check(); err != nil {
			return err
		}
	}
	return nil
}

func (s Scenario) validateCommon() error {
	if len(s.Canaries) > canariesMax {
		return fmt.Errorf("scenario: %d canaries; at most %d", len(s.Canaries), canariesMax)
	}
	for _, c := range s.Canaries {
		if !clientNamePattern.MatchString(c) {
			return fmt.Errorf("scenario: canary name %q is not a planted bug's name", c)
		}
	}
	if !s.Expect.Fail && s.Expect.Check != "" {
		return fmt.Errorf("scenario: expect pass names a check (%s)", s.Expect.Check)
	}
	return nil
}

func (s Scenario) validateCluster() error {
	c := s.Cluster
	if c.Nodes < nodesMin || c.Nodes > nodesMax {
		return fmt.Errorf("scenario: %d nodes; want %d to %d", c.Nodes, nodesMin, nodesMax)
	}
	if c.OffsetsPartitions < 1 || c.OffsetsPartitions > offsetsPartitionsMax {
		return fmt.Errorf("scenario: offsets-partitions %d; want 1 to %d", c.OffsetsPartitions, offsetsPartitionsMax)
	}
	if c.MetadataSnapshotEvery != 0 && (c.MetadataSnapshotEvery < metadataSnapshotEveryMin || c.MetadataSnapshotEvery > metadataSnapshotEveryMax) {
		return fmt.Errorf("scenario: metadata-snapshot-every %d; want 0 (the broker's default) or %d to %d", c.MetadataSnapshotEvery, metadataSnapshotEveryMin, metadataSnapshotEveryMax)
	}
	if c.LeaderRebalanceEvery != 0 && (c.LeaderRebalanceEvery < leaderRebalanceEveryMin || c.LeaderRebalanceEvery > leaderRebalanceEveryMax) {
		return fmt.Errorf("scenario: leader-rebalance-every %v; want %v to %v, or none", c.LeaderRebalanceEvery, leaderRebalanceEveryMin, leaderRebalanceEveryMax)
	}
	if len(s.ClockRates) != c.Nodes {
		return fmt.Errorf("scenario: %d clock rates for %d nodes", len(s.ClockRates), c.Nodes)
	}
	for i, rate := range s.ClockRates {
		if !(rate >= clockRateMin && rate <= clockRateMax) {
			return fmt.Errorf("scenario: clock rate %v of %s; want %v to %v", rate, NodeName(i+1), clockRateMin, clockRateMax)
		}
	}
	return nil
}

func (s Scenario) validateTopics() error {
	if len(s.Topics) == 0 || len(s.Topics) > topicsMax {
		return fmt.Errorf("scenario: %d topics; want 1 to %d", len(s.Topics), topicsMax)
	}
	seen := map[string]bool{}
	for _, t := range s.Topics {
		switch {
		case !topicNamePattern.MatchString(t.Name) || len(t.Name) > nameBytesMax || t.Name[0] == '_' || t.Name[0] == '.':
			return fmt.Errorf("scenario: topic name %q; want up to %d of [a-zA-Z0-9._-], not starting with _ or .", t.Name, nameBytesMax)
		case seen[t.Name]:
			return fmt.Errorf("scenario: topic %s twice", t.Name)
		case t.Partitions < 1 || t.Partitions > partitionsMax:
			return fmt.Errorf("scenario: topic %s has %d partitions; want 1 to %d", t.Name, t.Partitions, partitionsMax)
		case t.Replication < 1 || t.Replication > s.Cluster.Nodes:
			return fmt.Errorf("scenario: topic %s has replication %d with %d nodes", t.Name, t.Replication, s.Cluster.Nodes)
		case t.MinInsync < 1 || t.MinInsync > t.Replication:
			return fmt.Errorf("scenario: topic %s has min-insync %d with replication %d", t.Name, t.MinInsync, t.Replication)
		case t.DeleteEvery != 0 && (t.DeleteEvery < deleteEveryMin || t.DeleteEvery > s.Safety):
			return fmt.Errorf("scenario: topic %s deletes every %v; want %v to the safety phase (%v)", t.Name, t.DeleteEvery, deleteEveryMin, s.Safety)
		case t.RecreateEvery != 0 && (t.RecreateEvery < recreateEveryMin || t.RecreateEvery > s.Safety):
			return fmt.Errorf("scenario: topic %s is created again every %v; want %v to the safety phase (%v)", t.Name, t.RecreateEvery, recreateEveryMin, s.Safety)
		case t.RecreateEvery != 0 && (t.GrowTo != 0 || t.DeleteEvery != 0 || t.AlterEvery != 0 || t.ElectEvery != 0 || t.ReassignEvery != 0):
			return fmt.Errorf("scenario: topic %s is created again, so it neither grows, has records deleted, has its configs altered, has leaders elected nor is reassigned", t.Name)
		case t.ReassignEvery != 0 && (t.ReassignEvery < reassignEveryMin || t.ReassignEvery > s.Safety):
			return fmt.Errorf("scenario: topic %s is reassigned every %v; want %v to the safety phase (%v)", t.Name, t.ReassignEvery, reassignEveryMin, s.Safety)
		case t.ElectEvery != 0 && (t.ElectEvery < electEveryMin || t.ElectEvery > s.Safety):
			return fmt.Errorf("scenario: topic %s has leaders elected every %v; want %v to the safety phase (%v)", t.Name, t.ElectEvery, electEveryMin, s.Safety)
		case t.AlterEvery != 0 && (t.AlterEvery < alterEveryMin || t.AlterEvery > s.Safety):
			return fmt.Errorf("scenario: topic %s has its configs altered every %v; want %v to the safety phase (%v)", t.Name, t.AlterEvery, alterEveryMin, s.Safety)
		case t.RecreateEvery != 0 && s.Clients.Uses(t.Name):
			return fmt.Errorf("scenario: topic %s is created again, so no client may use it", t.Name)
		case t.GrowTo == 0 && t.GrowAt != 0:
			return fmt.Errorf("scenario: topic %s has grow-at without grow-to", t.Name)
		case t.GrowTo != 0 && (t.GrowTo <= t.Partitions || t.GrowTo > partitionsMax):
			return fmt.Errorf("scenario: topic %s grows from %d to %d partitions; want more, and at most %d", t.Name, t.Partitions, t.GrowTo, partitionsMax)
		case t.GrowTo != 0 && (t.GrowAt < 0 || t.GrowAt >= s.Safety):
			return fmt.Errorf("scenario: topic %s grows at %v; want within the safety phase (%v)", t.Name, t.GrowAt, s.Safety)
		}
		seen[t.Name] = true
	}
	return nil
}

func (s Scenario) validateClients() error {
	c := s.Clients
	switch {
	case len(c.Producers) > producersMax:
		return fmt.Errorf("scenario: %d producers; at most %d", len(c.Producers), producersMax)
	case len(c.Readers) > readersMax:
		return fmt.Errorf("scenario: %d readers; at most %d", len(c.Readers), readersMax)
	case len(c.Groups) > groupsMax:
		return fmt.Errorf("scenario: %d groups; at most %d", len(c.Groups), groupsMax)
	}
	for _, p := range c.Producers {
		if p.Acks != -1 && p.Acks != 1 {
			return fmt.Errorf("scenario: producer %s has acks %d; want all (-1) or 1", p.Name, p.Acks)
		}
		if p.InFlight > 1 && !p.Idempotent {
			return fmt.Errorf("scenario: producer %s keeps %d sends in flight; more than one needs idempotent", p.Name, p.InFlight)
		}
		if err := s.validateClientPartitions("producer "+p.Name, p.Topic, p.Partitions); err != nil {
			return err
		}
	}
	for _, r := range c.Readers {
		if err := s.validateClientPartitions("reader "+r.Name, r.Topic, r.Partitions); err != nil {
			return err
		}
	}
	groupNames := map[string]bool{}
	for _, g := range c.Groups {
		if err := s.validateClientPartitions("group "+g.Name, g.Topic, nil); err != nil {
			return err
		}
		if g.Members < 1 || g.Members > groupMembersMax {
			return fmt.Errorf("scenario: group %s has %d members; want 1 to %d", g.Name, g.Members, groupMembersMax)
		}
		if g.Balancer != BalancerEager && !slices.Contains(Balancers(), g.Balancer) {
			return fmt.Errorf("scenario: group %s has balancer %q; want %s or %s (eager: none named)", g.Name, g.Balancer, BalancerCooperative, BalancerUpgrade)
		}
		if g.OffsetReaders < 0 || g.OffsetReaders > groupOffsetReadersMax {
			return fmt.Errorf("scenario: group %s has %d offset readers; want 0 to %d", g.Name, g.OffsetReaders, groupOffsetReadersMax)
		}
		if groupNames[g.Name] {
			return fmt.Errorf("scenario: group %s twice", g.Name)
		}
		groupNames[g.Name] = true
		if err := validateName("group", g.Name); err != nil {
			return err
		}
	}
	names := s.ClientNames()
	if len(names) > clientsMax {
		return fmt.Errorf("scenario: %d clients; at most %d", len(names), clientsMax)
	}
	seen := map[string]bool{}
	for _, name := range names {
		if err := validateName("client", name); err != nil {
			return err
		}
		if seen[name] {
			return fmt.Errorf("scenario: two clients are named %s", name)
		}
		seen[name] = true
	}
	return nil
}

func validateName(what, name string) error {
	switch {
	case !clientNamePattern.MatchString(name) || len(name) > nameBytesMax:
		return fmt.Errorf("scenario: %s name %q; want up to %d of [a-z0-9-], starting with a letter", what, name, nameBytesMax)
	case nodeNamePattern.MatchString(name) || slices.Contains(reservedClientNames, name):
		return fmt.Errorf("scenario: %s name %q is taken by the cluster's own hosts", what, name)
	}
	return nil
}

func (s Scenario) validateClientPartitions(who, topic string, partitions []int32) error {
	t, ok := s.Topic(topic)
	if !ok {
		return fmt.Errorf("scenario: %s uses topic %q, which the scenario does not create", who, topic)
	}
	for i, p := range partitions {
		if p < 0 || int(p) >= t.Partitions {
			return fmt.Errorf("scenario: %s uses partition %d of %s, which has %d", who, p, topic, t.Partitions)
		}
		if i > 0 && partitions[i-1] >= p {
			return fmt.Errorf("scenario: %s lists partitions %v; want them ascending, each once", who, partitions)
		}
	}
	return nil
}

func (s Scenario) validateTimeouts() error {
	t := s.Timeouts
	for _, named := range []struct {
		name  string
		value time.Duration
	}{
		{"election", t.Election}, {"quorum-fetch", t.QuorumFetch},
		{"broker-session", t.BrokerSession}, {"broker-heartbeat", t.BrokerHeartbeat},
		{"replica-lag", t.ReplicaLag}, {"replica-fetch-wait", t.ReplicaFetchWait},
		{"group-session", t.GroupSession}, {"group-rebalance", t.GroupRebalance},
		{"request", t.Request}, {"delivery", t.Delivery}, {"produce-wait", t.ProduceWait},
		{"fetch-wait", t.FetchWait}, {"think", t.Think},
	} {
		if named.value < timeoutMin || named.value > timeoutMax {
			return fmt.Errorf("scenario: timeout %s %v; want %v to %v", named.name, named.value, timeoutMin, timeoutMax)
		}
	}
	switch {
	case t.GroupInitialDelay < 0 || t.GroupInitialDelay > timeoutMax:
		return fmt.Errorf("scenario: timeout group-initial-delay %v; want 0 to %v", t.GroupInitialDelay, timeoutMax)
	case t.Restart < 0 || t.Restart > timeoutMax:
		return fmt.Errorf("scenario: timeout restart %v; want 0 to %v", t.Restart, timeoutMax)
	case t.BrokerHeartbeat >= t.BrokerSession:
		return fmt.Errorf("scenario: broker-heartbeat %v must be shorter than broker-session %v", t.BrokerHeartbeat, t.BrokerSession)
	case t.QuorumFetch <= t.Election:
		return fmt.Errorf("scenario: quorum-fetch %v must be longer than election %v", t.QuorumFetch, t.Election)
	case t.GroupRebalance < t.GroupSession:
		return fmt.Errorf("scenario: group-rebalance %v must be at least group-session %v", t.GroupRebalance, t.GroupSession)
	}
	return nil
}

func (s Scenario) validateConditions() error {
	n, d, l := s.Network, s.Disk, s.Logs
	switch {
	case l.SegmentBytes != 0 && (l.SegmentBytes < segmentBytesMin || l.SegmentBytes > segmentBytesMax):
		return fmt.Errorf("scenario: logs segment-bytes %d; want 0 (the default) or %d to %d", l.SegmentBytes, segmentBytesMin, segmentBytesMax)
	case l.OffsetsSegmentBytes != 0 && (l.OffsetsSegmentBytes < segmentBytesMin || l.OffsetsSegmentBytes > segmentBytesMax):
		return fmt.Errorf("scenario: logs offsets-segment-bytes %d; want 0 (the default) or %d to %d", l.OffsetsSegmentBytes, segmentBytesMin, segmentBytesMax)
	case l.RetentionCheck != 0 && (l.RetentionCheck < retentionCheckMin || l.RetentionCheck > retentionCheckMax):
		return fmt.Errorf("scenario: logs retention-check %v; want 0 (the default) or %v to %v", l.RetentionCheck, retentionCheckMin, retentionCheckMax)
	case l.RetentionBytes != 0 && (l.RetentionBytes < retentionBytesMin || l.RetentionBytes > retentionBytesMax):
		return fmt.Errorf("scenario: logs retention-bytes %d; want 0 (the default) or %d to %d", l.RetentionBytes, retentionBytesMin, retentionBytesMax)
	case n.LatencyMin < 0 || n.LatencyMax < n.LatencyMin || n.LatencyMax > latencyMax:
		return fmt.Errorf("scenario: network latency %v-%v; want 0 <= min <= max <= %v", n.LatencyMin, n.LatencyMax, latencyMax)
	case d.SyncLatencyMin < 0 || d.SyncLatencyMax < d.SyncLatencyMin || d.SyncLatencyMax > syncLatencyMax:
		return fmt.Errorf("scenario: disk sync %v-%v; want 0 <= min <= max <= %v", d.SyncLatencyMin, d.SyncLatencyMax, syncLatencyMax)
	}
	for _, chance := range []struct {
		name  string
		value float64
	}{
		{"torn-write", d.TornWrite}, {"read-corruption", d.ReadCorruption}, {"sync-failure", d.SyncFailure},
		{"buggify enable", s.Buggify.Enable}, {"buggify fire", s.Buggify.Fire},
		{"leader-bias", s.Faults.LeaderBias},
	} {
		if !(chance.value >= 0 && chance.value <= 1) {
			return fmt.Errorf("scenario: %s %v; a chance lies in [0, 1]", chance.name, chance.value)
		}
	}
	return nil
}

func (s Scenario) validateFaults() error {
	f := s.Faults
	if f.WindowMin < 0 || f.WindowMax < f.WindowMin || f.WindowMax > windowMax {
		return fmt.Errorf("scenario: fault window %v-%v; want 0 <= min <= max <= %v", f.WindowMin, f.WindowMax, windowMax)
	}
	if len(s.Rates) > ratesMax {
		return fmt.Errorf("scenario: %d rates; at most %d", len(s.Rates), ratesMax)
	}
	for i, r := range s.Rates {
		info, ok := infoOf(r.Kind)
		switch {
		case !ok || !info.drawn:
			return fmt.Errorf("scenario: rate for %q, which is not a kind the swarm draws", r.Kind)
		case r.Mean < rateMeanMin:
			return fmt.Errorf("scenario: rate %s every %v; at most every %v", r.Kind, r.Mean, rateMeanMin)
		case i > 0 && kindOrder(s.Rates[i-1].Kind) >= kindOrder(r.Kind):
			return fmt.Errorf("scenario: rates out of order or twice at %s", r.Kind)
		case r.Kind == KindPartition && s.Cluster.Nodes < 2:
			return fmt.Errorf("scenario: rate partition in a cluster of %d node; a partition needs two sides", s.Cluster.Nodes)
		}
	}
	if len(s.Schedule) > eventsMax {
		return fmt.Errorf("scenario: %d events; at most %d", len(s.Schedule), eventsMax)
	}
	for i, e := range s.Schedule {
		if i > 0 && e.At < s.Schedule[i-1].At {
			return fmt.Errorf("scenario: event at %v comes after one at %v; list them in time order", e.At, s.Schedule[i-1].At)
		}
		if err := s.validateEvent(e); err != nil {
			return fmt.Errorf("scenario: event at %v (%s): %w", e.At, e.Kind, err)
		}
	}
	return nil
}

func (s Scenario) validateEvent(e Event) error {
	info, ok := infoOf(e.Kind)
	switch {
	case !ok:
		return fmt.Errorf("unknown kind")
	case e.At < 0 || e.At >= s.Safety && e.Kind != KindIdle:
		return fmt.Errorf("the safety phase lasts %v", s.Safety)
	case e.For < 0 || e.For > windowMax:
		return fmt.Errorf("lasts %v; want 0 to %v", e.For, windowMax)
	case info.windowRequired && e.For == 0:
		return fmt.Errorf("needs a window (for D)")
	case !info.window && e.For != 0:
		return fmt.Errorf("takes no window")
	}
	switch info.target {
	case targetNode:
		if err := s.validateTarget(e.Target); err != nil {
			return err
		}
	case targetSides:
		if err := s.validateSides(e.Sides); err != nil {
			return err
		}
	case targetClient:
		if e.Client != "any" && !slices.Contains(s.ClientNames(), e.Client) {
			return fmt.Errorf("no client %q", e.Client)
		}
	}
	switch e.Kind {
	case KindPowerLoss:
		if e.Stagger < 0 || e.Stagger > windowMax {
			return fmt.Errorf("stagger %v; want 0 to %v", e.Stagger, windowMax)
		}
	case KindClockJump:
		if e.By == 0 || e.By < -clockJumpMax || e.By > clockJumpMax {
			return fmt.Errorf("jumps by %v; want a non-zero step within %v", e.By, clockJumpMax)
		}
	case KindClockDrift:
		if !(e.Rate >= clockRateMin && e.Rate <= clockRateMax) {
			return fmt.Errorf("rate %v; want %v to %v", e.Rate, clockRateMin, clockRateMax)
		}
	case KindSlowDisk:
		// A slow disk with no delay would count as the fault and do
		// nothing: "sync A-B" must slow something.
		if e.SyncMin < 0 || e.SyncMax < e.SyncMin || e.SyncMax > syncLatencyMax || e.SyncMax == 0 {
			return fmt.Errorf("sync %v-%v; want 0 <= min <= max <= %v, max above 0 (give sync A-B)", e.SyncMin, e.SyncMax, syncLatencyMax)
		}
	case KindSlowNet:
		if e.LatencyMin < 0 || e.LatencyMax < e.LatencyMin || e.LatencyMax > slowNetLatencyMax || e.LatencyMax == 0 {
			return fmt.Errorf("latency %v-%v; want 0 <= min <= max <= %v, max above 0 (give latency A-B)", e.LatencyMin, e.LatencyMax, slowNetLatencyMax)
		}
	}
	return nil
}

func (s Scenario) validateTarget(t Target) error {
	switch t.Role {
	case RoleNode:
		if t.Node < 1 || t.Node > s.Cluster.Nodes {
			return fmt.Errorf("no node %s in a cluster of %d", NodeName(t.Node), s.Cluster.Nodes)
		}
	case RoleLeader:
		if t.Topic == OffsetsTopicName {
			if t.Partition < 0 || int(t.Partition) >= s.Cluster.OffsetsPartitions {
				return fmt.Errorf("no partition %s-%d among %d", t.Topic, t.Partition, s.Cluster.OffsetsPartitions)
			}
			return nil
		}
		topic, ok := s.Topic(t.Topic)
		if !ok || t.Partition < 0 || int(t.Partition) >= topic.Partitions {
			return fmt.Errorf("no partition %s-%d", t.Topic, t.Partition)
		}
	case RoleCoordinator:
		if len(s.Clients.Groups) == 0 {
			return fmt.Errorf("no group to find the coordinator of")
		}
	case RoleController, RoleAny:
	default:
		return fmt.Errorf("no target")
	}
	return nil
}

func (s Scenario) validateSides(sides [2][]int) error {
	seen := map[int]bool{}
	for _, side := range sides {
		if len(side) == 0 {
			return fmt.Errorf("a partition needs nodes on both sides")
		}
		for _, id := range side {
			if id < 1 || id > s.Cluster.Nodes {
				return fmt.Errorf("no node %s in a cluster of %d", NodeName(id), s.Cluster.Nodes)
			}
			if seen[id] {
				return fmt.Errorf("%s is on both sides", NodeName(id))
			}
			seen[id] = true
		}
	}
	return nil
}

func (s Scenario) validatePhases() error {
	switch {
	case s.Safety < safetyMin || s.Safety > safetyMax:
		return fmt.Errorf("scenario: safety %v; want %v to %v", s.Safety, safetyMin, safetyMax)
	case s.Liveness < livenessMin || s.Liveness > livenessMax:
		return fmt.Errorf("scenario: liveness %v; want %v to %v", s.Liveness, livenessMin, livenessMax)
	case s.Operations < 0 || s.Operations > operationsMax:
		return fmt.Errorf("scenario: operations %d; want 0 to %d", s.Operations, operationsMax)
	}
	return nil
}
