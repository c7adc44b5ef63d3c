package scenario

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"sluice/core/batch"
)

// Format writes a scenario in the text format Parse reads: one directive a
// line, every part of the scenario spelled out, so the text alone replays
// the run. Parse(Format(s)) == s.
func Format(s Scenario) string {
	var b strings.Builder
	line := func(format string, args ...any) { fmt.Fprintf(&b, format+"\n", args...) }
	if s.Workload != WorkloadCluster {
		line("workload %s", s.Workload)
		line("seed %d", s.Seed)
		formatEnding(&b, s)
		return b.String()
	}
	line("seed %d", s.Seed)
	if s.Profile != "" {
		line("profile %s", s.Profile)
	}
	if s.Cluster.LeaderRebalanceEvery != 0 {
		line("nodes %d leader-rebalance-every %s", s.Cluster.Nodes, formatDuration(s.Cluster.LeaderRebalanceEvery))
	} else {
		line("nodes %d", s.Cluster.Nodes)
	}
	line("offsets-partitions %d", s.Cluster.OffsetsPartitions)
	// Written even at 0 (the broker's default), so that a file keeps it
	// when a seed would draw another.
	line("metadata-snapshot-every %d", s.Cluster.MetadataSnapshotEvery)
	rates := make([]string, len(s.ClockRates))
	for i, r := range s.ClockRates {
		rates[i] = formatFloat(r)
	}
	line("clocks %s", strings.Join(rates, " "))
	for _, t := range s.Topics {
		text := fmt.Sprintf("topic %s partitions %d replication %d min-insync %d", t.Name, t.Partitions, t.Replication, t.MinInsync)
		if t.PageCache {
			text += " page-cache"
		}
		if t.Unclean {
			text += " unclean"
		}
		if t.GrowTo != 0 {
			text += fmt.Sprintf(" grow-to %d grow-at %s", t.GrowTo, formatDuration(t.GrowAt))
		}
		for _, a := range t.repeatingActions() {
			if *a.every != 0 {
				text += " " + a.name + " " + formatDuration(*a.every)
			}
		}
		line("%s", text)
	}
	formatClients(&b, s.Clients)
	t := s.Timeouts
	line("timeouts election %s quorum-fetch %s broker-session %s broker-heartbeat %s",
		formatDuration(t.Election), formatDuration(t.QuorumFetch), formatDuration(t.BrokerSession), formatDuration(t.BrokerHeartbeat))
	line("timeouts replica-lag %s replica-fetch-wait %s", formatDuration(t.ReplicaLag), formatDuration(t.ReplicaFetchWait))
	line("timeouts group-session %s group-rebalance %s group-initial-delay %s",
		formatDuration(t.GroupSession), formatDuration(t.GroupRebalance), formatDuration(t.GroupInitialDelay))
	line("timeouts request %s delivery %s produce-wait %s fetch-wait %s think %s restart %s",
		formatDuration(t.Request), formatDuration(t.Delivery), formatDuration(t.ProduceWait),
		formatDuration(t.FetchWait), formatDuration(t.Think), formatDuration(t.Restart))
	line("network latency %s", formatRange(s.Network.LatencyMin, s.Network.LatencyMax))
	line("disk sync %s torn-write %s read-corruption %s sync-failure %s", formatRange(s.Disk.SyncLatencyMin, s.Disk.SyncLatencyMax),
		formatFloat(s.Disk.TornWrite), formatFloat(s.Disk.ReadCorruption), formatFloat(s.Disk.SyncFailure))
	// Written even at the defaults, so that a file keeps them when a seed
	// would draw others.
	line("logs segment-bytes %d offsets-segment-bytes %d retention-check %s retention-bytes %d",
		s.Logs.SegmentBytes, s.Logs.OffsetsSegmentBytes, formatDuration(s.Logs.RetentionCheck), s.Logs.RetentionBytes)
	line("buggify enable %s fire %s", formatFloat(s.Buggify.Enable), formatFloat(s.Buggify.Fire))
	line("safety %s", formatDuration(s.Safety))
	line("operations %d", s.Operations)
	line("liveness %s", formatDuration(s.Liveness))
	line("faults window %s leader-bias %s", formatRange(s.Faults.WindowMin, s.Faults.WindowMax), formatFloat(s.Faults.LeaderBias))
	if len(s.Rates) == 0 {
		line("no rates")
	}
	for _, r := range s.Rates {
		line("rate %s %s", r.Kind, formatDuration(r.Mean))
	}
	if len(s.Schedule) == 0 {
		line("no faults")
	}
	for _, e := range s.Schedule {
		line("at %s %s", formatDuration(e.At), FormatEvent(e))
	}
	formatEnding(&b, s)
	return b.String()
}

func formatClients(b *strings.Builder, c Clients) {
	if len(c.Producers) == 0 {
		b.WriteString("no producers\n")
	}
	for _, p := range c.Producers {
		acks := "all"
		if p.Acks == 1 {
			acks = "1"
		}
		fmt.Fprintf(b, "producer %s topic %s acks %s", p.Name, p.Topic, acks)
		if p.Idempotent {
			b.WriteString(" idempotent")
		}
		if len(p.Partitions) > 0 {
			b.WriteString(" partitions " + formatPartitions(p.Partitions))
		}
		if p.Linger != 0 {
			b.WriteString(" linger " + formatDuration(p.Linger))
		}
		if p.BatchMax > 1 {
			b.WriteString(" batch " + strconv.Itoa(p.BatchMax))
		}
		if p.Compression != batch.CompressionNone {
			b.WriteString(" compression " + batch.CodecName(p.Compression))
		}
		if p.InFlight > 1 {
			b.WriteString(" in-flight " + strconv.Itoa(p.InFlight))
		}
		b.WriteByte('\n')
	}
	if len(c.Readers) == 0 {
		b.WriteString("no readers\n")
	}
	for _, r := range c.Readers {
		fmt.Fprintf(b, "reader %s topic %s", r.Name, r.Topic)
		if len(r.Partitions) > 0 {
			b.WriteString(" partitions " + formatPartitions(r.Partitions))
		}
		b.WriteByte('\n')
	}
	if len(c.Groups) == 0 {
		b.WriteString("no groups\n")
	}
	for _, g := range c.Groups {
		fmt.Fprintf(b, "group %s topic %s members %d", g.Name, g.Topic, g.Members)
		if g.OffsetReaders > 0 {
			fmt.Fprintf(b, " offset-readers %d", g.OffsetReaders)
		}
		if g.Balancer != BalancerEager {
			fmt.Fprintf(b, " balancer %s", g.Balancer)
		}
		if g.Static {
			b.WriteString(" static")
		}
		b.WriteByte('\n')
	}
}

// formatEnding writes the canaries and the expectation.
func formatEnding(b *strings.Builder, s Scenario) {
	for _, c := range s.Canaries {
		fmt.Fprintf(b, "canary %s\n", c)
	}
	switch {
	case !s.Expect.Fail:
		b.WriteString("expect pass\n")
	case s.Expect.Check == "":
		b.WriteString("expect fail\n")
	default:
		fmt.Fprintf(b, "expect fail %s\n", s.Expect.Check)
	}
}

// FormatEvent writes an event without its time: "crash leader orders-0
// for 1s", as it follows "at T" in a file.
func FormatEvent(e Event) string {
	info, _ := infoOf(e.Kind)
	parts := []string{string(e.Kind)}
	switch info.target {
	case targetNode:
		parts = append(parts, e.Target.String())
	case targetSides:
		parts = append(parts, formatNodes(e.Sides[0]), "|", formatNodes(e.Sides[1]))
	case targetClient:
		parts = append(parts, e.Client)
	}
	switch e.Kind {
	case KindClockJump:
		parts = append(parts, "by", formatSigned(e.By))
	case KindClockDrift:
		parts = append(parts, "rate", formatFloat(e.Rate))
	case KindSlowDisk:
		parts = append(parts, "sync", formatRange(e.SyncMin, e.SyncMax))
	case KindSlowNet:
		parts = append(parts, "latency", formatRange(e.LatencyMin, e.LatencyMax))
	}
	if e.For > 0 {
		parts = append(parts, "for", formatDuration(e.For))
	}
	if e.Stagger > 0 {
		parts = append(parts, "stagger", formatDuration(e.Stagger))
	}
	return strings.Join(parts, " ")
}

func formatNodes(ids []int) string {
	names := make([]string, len(ids))
	for i, id := range ids {
		names[i] = NodeName(id)
	}
	return strings.Join(names, " ")
}

func formatPartitions(partitions []int32) string {
	parts := make([]string, len(partitions))
	for i, p := range partitions {
		parts[i] = strconv.Itoa(int(p))
	}
	return strings.Join(parts, ",")
}

// formatDuration writes d as Go does, with "us" for microseconds so files
// stay ASCII.
func formatDuration(d time.Duration) string {
	return strings.ReplaceAll(d.String(), "µ", "u")
}

// formatSigned writes a duration with its sign: "+30s", "-1.5s".
func formatSigned(d time.Duration) string {
	if d >= 0 {
		return "+" + formatDuration(d)
	}
	return formatDuration(d)
}

func formatRange(low, high time.Duration) string {
	return formatDuration(low) + "-" + formatDuration(high)
}

// formatFloat writes the shortest text that reads back as f.
func formatFloat(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }
