package broker

import (
	"slices"
	"testing"
	"time"

	"sluice/core/metadata"
)

// A leader in a takeover waits for a former leader until the image no
// longer names it deposed. When the BrokerCaughtUpRecord that says so
// reaches this broker inside a snapshot (FetchSnapshot, a follower too far
// behind the quorum) rather than as a record, the continuing leadership
// must drop the former leader all the same, or its high watermark stays
// held until the deposition's Until (a session). The snapshot is faked: the
// broker's own image, with Deposed cleared, restored.
func TestASnapshotThatNamesNoDeposedLeaderEndsTheTakeover(t *testing.T) {
	c := newTestCluster(t, 3, 21)
	ctrl := c.controllerLeader()
	var pair []int32
	for _, id := range c.ids {
		if id != ctrl {
			pair = append(pair, id)
		}
	}
	admin := c.client(ctrl)
	admin.createTopicRF("m", 1, 2)
	requireNoError(t, "reassign", admin.reassign("m", 0, pair).ErrorCode, nil)
	c.runUntil("m on the two non-controllers, both in sync", reassignmentSettleMax, func() bool {
		return c.partitionEverywhere("m", 0, func(p *metadata.Partition) bool {
			return slices.Equal(p.Replicas, pair) && !p.Reassigning() && len(p.ISR) == 2 && p.Leader >= 0
		})
	})
	x := c.nodes[ctrl].broker.image.Topics["m"].Partitions[0].Leader
	y := pair[0]
	if y == x {
		y = pair[1]
	}
	c.client(x).produce("m", 0, "a")

	// The old leader x can no longer reach the controller: its heartbeats
	// (and so any BrokerCaughtUp for it) stop, while it stays unfenced for
	// a session.
	c.network.Partition([]string{clusterHost(x)}, []string{clusterHost(ctrl)})
	requireNoError(t, "reassign to y", admin.reassign("m", 0, []int32{y}).ErrorCode, nil)
	key := partitionKey{topic: "m"}
	c.runUntil("y leads m alone", reassignmentSettleMax, func() bool {
		p, open := c.nodes[y].broker.partitions[key]
		return open && p.IsLeader() && slices.Equal(c.nodes[y].broker.image.Topics["m"].Partitions[0].Replicas, []int32{y})
	})
	if d := c.nodes[y].broker.image.Topics["m"].Partitions[0].Deposed; !slices.Contains(d, x) {
		t.Fatalf("x=%d not deposed: %v", x, d)
	}
	if _, code := c.client(y).produceAcks("m", 0, 1, "b"); code != 0 {
		t.Fatalf("produce to y: %d", code)
	}
	c.run(200 * time.Millisecond)
	p := c.nodes[y].broker.partitions[key]
	if p.HighWatermark() >= p.LogEndOffset() {
		t.Fatalf("no takeover to test: high watermark %d, log end %d", p.HighWatermark(), p.LogEndOffset())
	}

	// y now restores a snapshot in which x was found caught up (its
	// BrokerCaughtUpRecord is inside, so y never applies it as a record).
	b := c.nodes[y].broker
	records := b.image.Records()
	for _, r := range records {
		if r.Partition != nil {
			r.Partition.Deposed = nil
		}
	}
	if err := (snapshotter{b}).Restore(b.image.Offset, records); err != nil {
		t.Fatal(err)
	}
	c.run(200 * time.Millisecond)
	p = c.nodes[y].broker.partitions[key]
	if d := b.image.Topics["m"].Partitions[0].Deposed; len(d) != 0 {
		t.Fatalf("the restored image still has deposed %v", d)
	}
	if p.HighWatermark() < p.LogEndOffset() {
		t.Fatalf("after a snapshot that names no deposed leader, y still holds its high watermark at %d (log end %d) for x=%d",
			p.HighWatermark(), p.LogEndOffset(), x)
	}
}
