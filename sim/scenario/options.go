package scenario

import (
	"cmp"
	"fmt"
	"strconv"
	"strings"
	"time"

	"sluice/core/batch"
	"sluice/sim"
)

// Options lists the scenario for a result line, in a stable order: what
// the seed chose, compactly, schedule included.
func (s Scenario) Options() []sim.Option {
	if s.Workload != WorkloadCluster {
		return []sim.Option{sim.Opt("workload", s.Workload)}
	}
	var topics, producers, readers, groups, rates, schedule []string
	for _, t := range s.Topics {
		text := fmt.Sprintf("%s:%dx%d/isr%d", t.Name, t.Partitions, t.Replication, t.MinInsync)
		if t.PageCache {
			text += "/page-cache"
		}
		if t.Unclean {
			text += "/unclean"
		}
		if t.GrowTo != 0 {
			text += fmt.Sprintf("/grow%d@%s", t.GrowTo, formatDuration(t.GrowAt))
		}
		for _, a := range t.repeatingActions() {
			if *a.every != 0 {
				text += "/" + a.name + formatDuration(*a.every)
			}
		}
		topics = append(topics, text)
	}
	for _, p := range s.Clients.Producers {
		acks := "all"
		if p.Acks == 1 {
			acks = "1"
		}
		kind := "plain"
		if p.Idempotent {
			kind = "idem"
		}
		linger := ""
		if p.Linger != 0 {
			linger = "/linger" + formatDuration(p.Linger)
		}
		if p.BatchMax > 1 {
			linger += "/batch" + strconv.Itoa(p.BatchMax)
		}
		if p.Compression != batch.CompressionNone {
			linger += "/" + batch.CodecName(p.Compression)
		}
		if p.InFlight > 1 {
			linger += "/inflight" + strconv.Itoa(p.InFlight)
		}
		producers = append(producers, fmt.Sprintf("%s:%s/acks%s/%s%s%s", p.Name, p.Topic, acks, kind, partitionSuffix(p.Partitions), linger))
	}
	for _, r := range s.Clients.Readers {
		readers = append(readers, fmt.Sprintf("%s:%s%s", r.Name, r.Topic, partitionSuffix(r.Partitions)))
	}
	for _, g := range s.Clients.Groups {
		text := fmt.Sprintf("%s:%s/%d", g.Name, g.Topic, g.Members)
		if g.Balancer != BalancerEager {
			text += "/" + string(g.Balancer)
		}
		if g.Static {
			text += "/static"
		}
		groups = append(groups, text)
	}
	for _, r := range s.Rates {
		rates = append(rates, fmt.Sprintf("%s=%s", r.Kind, formatDuration(r.Mean)))
	}
	for _, e := range s.Schedule {
		schedule = append(schedule, fmt.Sprintf("%s:%s", formatDuration(e.At), strings.ReplaceAll(FormatEvent(e), " ", "_")))
	}
	clocks := make([]string, len(s.ClockRates))
	for i, r := range s.ClockRates {
		clocks[i] = formatFloat(r)
	}
	t := s.Timeouts
	return []sim.Option{
		sim.Opt("profile", cmp.Or(s.Profile, "none")),
		sim.Opt("nodes", s.Cluster.Nodes),
		sim.Opt("leader_rebalance", leaderRebalanceText(s.Cluster.LeaderRebalanceEvery)),
		sim.Opt("topics", strings.Join(topics, ",")),
		sim.Opt("producers", orNone(producers)),
		sim.Opt("readers", orNone(readers)),
		sim.Opt("groups", orNone(groups)),
		sim.Opt("offsets_partitions", s.Cluster.OffsetsPartitions),
		sim.Opt("metadata_snapshot_every", orDefault(s.Cluster.MetadataSnapshotEvery)),
		sim.Opt("election", formatDuration(t.Election)),
		sim.Opt("quorum_fetch", formatDuration(t.QuorumFetch)),
		sim.Opt("broker_session", formatDuration(t.BrokerSession)),
		sim.Opt("broker_heartbeat", formatDuration(t.BrokerHeartbeat)),
		sim.Opt("replica_lag", formatDuration(t.ReplicaLag)),
		sim.Opt("replica_fetch_wait", formatDuration(t.ReplicaFetchWait)),
		sim.Opt("group_session", formatDuration(t.GroupSession)),
		sim.Opt("group_rebalance", formatDuration(t.GroupRebalance)),
		sim.Opt("request", formatDuration(t.Request)),
		sim.Opt("delivery", formatDuration(t.Delivery)),
		sim.Opt("produce_wait", formatDuration(t.ProduceWait)),
		sim.Opt("fetch_wait", formatDuration(t.FetchWait)),
		sim.Opt("think", formatDuration(t.Think)),
		sim.Opt("latency", formatRange(s.Network.LatencyMin, s.Network.LatencyMax)),
		sim.Opt("sync_latency", formatRange(s.Disk.SyncLatencyMin, s.Disk.SyncLatencyMax)),
		sim.Opt("torn_write", formatFloat(s.Disk.TornWrite)),
		sim.Opt("read_corruption", formatFloat(s.Disk.ReadCorruption)),
		sim.Opt("sync_failure", formatFloat(s.Disk.SyncFailure)),
		sim.Opt("segment_bytes", orDefault(s.Logs.SegmentBytes)),
		sim.Opt("offsets_segment_bytes", orDefault(s.Logs.OffsetsSegmentBytes)),
		sim.Opt("retention_check", orDefaultDuration(s.Logs.RetentionCheck)),
		sim.Opt("retention_bytes", orDefault(s.Logs.RetentionBytes)),
		sim.Opt("clocks", strings.Join(clocks, ",")),
		sim.Opt("buggify", fmt.Sprintf("%s/%s", formatFloat(s.Buggify.Enable), formatFloat(s.Buggify.Fire))),
		sim.Opt("safety", formatDuration(s.Safety)),
		sim.Opt("operations_min", s.Operations),
		sim.Opt("liveness_max", formatDuration(s.Liveness)),
		sim.Opt("fault_window", formatRange(s.Faults.WindowMin, s.Faults.WindowMax)),
		sim.Opt("leader_bias", formatFloat(s.Faults.LeaderBias)),
		sim.Opt("rates", orNone(rates)),
		sim.Opt("schedule", orNone(schedule)),
	}
}

func partitionSuffix(partitions []int32) string {
	if len(partitions) == 0 {
		return ""
	}
	return "/p" + strings.ReplaceAll(formatPartitions(partitions), ",", "+")
}

func orNone(parts []string) string {
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ",")
}

// orDefaultDuration is a duration a zero of which leaves the broker's
// default.
func orDefaultDuration(d time.Duration) string {
	if d == 0 {
		return "default"
	}
	return formatDuration(d)
}

// orDefault is a count a zero of which leaves the broker's default.
func orDefault(n int) string {
	if n == 0 {
		return "default"
	}
	return strconv.Itoa(n)
}

// leaderRebalanceText is how often leaders go back to their preferred
// replicas, or off.
func leaderRebalanceText(every time.Duration) string {
	if every == 0 {
		return "off"
	}
	return formatDuration(every)
}
