package clusterworkload

import (
	"context"
	"fmt"
	"log/slog"

	"sluice/core/controller"
	"sluice/core/replica"
	"sluice/jepsen/history"
	"sluice/sim"
)

// The observer watches what the nodes log, as an operator tailing their
// logs would: each time a node's metadata quorum member or one of its
// partition replicas logs "became leader", it learns who leads what in
// which epoch. That is how the nemesis finds "the leader of orders-0" or
// "the controller" to aim at, and how the run checks that no epoch ever
// had two leaders: Raft's election safety for the metadata quorum, and
// for each partition the controller's promise that a leader epoch names
// one leader. The broker keeps its quorum and replicas to itself; their
// log lines are the one window the workload has into them besides the
// network, and a run that saw no quorum leader at all fails ("observer"),
// so a reworded log line cannot switch these checks off unnoticed.

// Log messages and attributes the observer recognizes (core/quorum's
// roles.go and core/replica's roles.go, the quorum's snapshot lines and
// the replicas' compaction lines).
const (
	becameLeaderMessage = "became leader"
	quorumAttribute     = "quorum"
	partitionAttribute  = "partition"
	epochAttribute      = "epoch"
	leaderEpochAttr     = "leader_epoch"
	topicIDAttribute    = "topic_id"
	// core/quorum's snapshots.go and fetch_snapshot.go.
	tookSnapshotMessage        = "took snapshot"
	downloadingSnapshotMessage = "downloading snapshot"
	restoredSnapshotMessage    = "restored snapshot"
)

// leadership is who leads something, and since which epoch; for a
// partition, of which topic of its name (topic id, see below).
type leadership struct {
	node    int
	epoch   int32
	topicID string
}

// topicIncarnation names a partition of one topic of its name: the
// partition ("orders-0") and the topic's id.
type topicIncarnation struct {
	partition, topicID string
}

type observer struct {
	run *run
	// quorumLeaders is the leader of each metadata quorum epoch seen.
	quorumLeaders map[int32]int
	controller    leadership
	// partitionLeaders is the leader of each leader epoch of each
	// partition seen, keyed by partition and topic id:
	// a topic deleted and created again under the same name is a new
	// topic, whose leader epochs start again at 0. partitionLeader is
	// the latest leadership of each partition name ("orders-0"), of
	// the newest topic of that name seen.
	partitionLeaders map[topicIncarnation]map[int32]int
	partitionLeader  map[string]leadership
	topicIDsSeen     map[string]bool
	// uncleanElected are the partitions a controller elected a leader of
	// outside the ISR.
	uncleanElected map[history.TopicPartition]bool
}

func newObserver(r *run) *observer {
	return &observer{
		run:              r,
		quorumLeaders:    map[int32]int{},
		controller:       leadership{node: -1, epoch: -1},
		partitionLeaders: map[topicIncarnation]map[int32]int{},
		partitionLeader:  map[string]leadership{},
		topicIDsSeen:     map[string]bool{},
		uncleanElected:   map[history.TopicPartition]bool{},
	}
}

// quorumLeader takes node's report that it leads the quorum in epoch.
func (o *observer) quorumLeader(node int, epoch int32) {
	if other, seen := o.quorumLeaders[epoch]; seen && other != node {
		o.run.fail("leaders", fmt.Sprintf("n%d and n%d both led the metadata quorum in epoch %d", other, node, epoch))
		return
	}
	o.quorumLeaders[epoch] = node
	o.run.counts.quorumLeaderships++
	if o.run.recording != nil { // spares a sweep the formatting
		o.run.record(sim.EventController, "", []string{fmt.Sprintf("n%d", node)}, fmt.Sprintf("n%d leads the metadata quorum in epoch %d", node, epoch))
	}
	if epoch >= o.controller.epoch {
		o.controller = leadership{node: node, epoch: epoch}
	}
}

// partitionLeaderElected takes node's report that it leads partition, of
// the topic with topicID, in a leader epoch.
func (o *observer) partitionLeaderElected(node int, partition, topicID string, epoch int32) {
	key := topicIncarnation{partition: partition, topicID: topicID}
	leaders := o.partitionLeaders[key]
	if leaders == nil {
		leaders = map[int32]int{}
		o.partitionLeaders[key] = leaders
	}
	if other, seen := leaders[epoch]; seen && other != node {
		o.run.fail("partition-leaders", fmt.Sprintf("n%d and n%d both led %s in leader epoch %d", other, node, partition, epoch))
		return
	}
	leaders[epoch] = node
	o.run.counts.partitionLeaderships++
	if o.run.recording != nil {
		o.run.record(sim.EventLeader, partition, []string{fmt.Sprintf("n%d", node)}, fmt.Sprintf("n%d leads %s in leader epoch %d", node, partition, epoch))
	}
	// A topic id not seen before is a newer topic of the name (ids are
	// never reused); a node that has not yet applied a deletion can still
	// report an old one, which only misleads the nemesis's aim for a
	// while.
	current, known := o.partitionLeader[partition]
	if !known || topicID != current.topicID && !o.topicIDsSeen[topicID] || topicID == current.topicID && epoch >= current.epoch {
		o.partitionLeader[partition] = leadership{node: node, epoch: epoch, topicID: topicID}
	}
	o.topicIDsSeen[topicID] = true
}

// snapshotLine counts a quorum member's metadata snapshot lines, the
// proof that a run's snapshots happened: taken, downloaded by a member
// that fell behind the leader's log start, restored (at a restart or
// after a download).
func (o *observer) snapshotLine(message string) {
	switch message {
	case tookSnapshotMessage:
		o.run.counts.metadataSnapshotsTaken++
	case downloadingSnapshotMessage:
		o.run.counts.metadataSnapshotDownloads++
	case restoredSnapshotMessage:
		o.run.counts.metadataSnapshotsRestored++
	}
}

// uncleanElection notes a controller's choice of a leader outside the
// ISR: the one way an unclean topic's partition may lose acknowledged
// writes (lossPermitted).
func (o *observer) uncleanElection(r slog.Record) {
	tp := history.TopicPartition{Partition: -1}
	r.Attrs(func(a slog.Attr) bool {
		switch {
		case a.Key == "topic":
			tp.Topic = a.Value.String()
		case a.Key == partitionAttribute && a.Value.Kind() == slog.KindInt64:
			tp.Partition = int32(a.Value.Int64())
		}
		return true
	})
	if tp.Topic == "" || tp.Partition < 0 {
		panic(fmt.Sprintf("clusterworkload: %q logged without its topic and partition", r.Message))
	}
	o.run.counts.uncleanElections++
	o.uncleanElected[tp] = true
}

// watchingHandler passes a node's log on to the trace, and shows the
// observer the lines it recognizes.
type watchingHandler struct {
	inner    slog.Handler
	observer *observer
	node     int
	// quorum and partition are set when a With gave them: the logger of
	// the quorum member or of one replica; controller for the
	// controller's.
	quorum     bool
	partition  string
	controller bool
}

// Enabled lets info records through for the observer even when the trace
// records only warnings, from the loggers whose lines it watches (a quorum
// member's, the replicas' and the controller's). Every other logger's info records would
// only be dropped in Handle: saying so here spares slog building them (it
// captures the caller's stack for each).
func (h *watchingHandler) Enabled(ctx context.Context, level slog.Level) bool {
	return (level >= slog.LevelInfo && h.watching()) || h.inner.Enabled(ctx, level)
}

// watching reports whether this logger's lines may be ones the observer
// recognizes.
func (h *watchingHandler) watching() bool { return h.quorum || h.partition != "" || h.controller }

func (h *watchingHandler) Handle(ctx context.Context, r slog.Record) error {
	if r.Message == becameLeaderMessage && h.watching() {
		h.watch(r)
	}
	switch {
	case h.quorum:
		h.observer.snapshotLine(r.Message)
	case h.partition != "" && r.Message == replica.CompactedMessage:
		h.observer.run.counts.compactions++
	case r.Message == controller.UncleanElectionMessage:
		h.observer.uncleanElection(r)
	case h.controller && r.Message == controller.ReassignmentCompletedMessage:
		h.observer.run.counts.reassignmentsCompleted++
	case h.controller && r.Message == controller.LeadersRebalancedMessage:
		r.Attrs(func(a slog.Attr) bool {
			if a.Key == "partitions" && a.Value.Kind() == slog.KindInt64 {
				h.observer.run.counts.leadersRebalanced += int(a.Value.Int64())
			}
			return true
		})
	}
	if h.inner.Enabled(ctx, r.Level) {
		return h.inner.Handle(ctx, r)
	}
	return nil
}

func (h *watchingHandler) watch(r slog.Record) {
	want := epochAttribute
	if !h.quorum {
		want = leaderEpochAttr
	}
	epoch, found, topicID := int32(-1), false, ""
	r.Attrs(func(a slog.Attr) bool {
		switch {
		case a.Key == want && a.Value.Kind() == slog.KindInt64:
			epoch, found = int32(a.Value.Int64()), true
		case a.Key == topicIDAttribute:
			topicID = a.Value.String()
		}
		return true
	})
	if !found {
		panic(fmt.Sprintf("clusterworkload: n%d logged %q without its %s", h.node, becameLeaderMessage, want))
	}
	if h.quorum {
		h.observer.quorumLeader(h.node, epoch)
	} else {
		if topicID == "" {
			panic(fmt.Sprintf("clusterworkload: n%d logged %q without its %s", h.node, becameLeaderMessage, topicIDAttribute))
		}
		h.observer.partitionLeaderElected(h.node, h.partition, topicID, epoch)
	}
}

func (h *watchingHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	next := *h
	next.inner = h.inner.WithAttrs(attrs)
	for _, a := range attrs {
		switch a.Key {
		case quorumAttribute:
			next.quorum = true
		case partitionAttribute:
			next.partition = a.Value.String()
		case "role":
			next.controller = a.Value.String() == "controller"
		}
	}
	return &next
}

func (h *watchingHandler) WithGroup(name string) slog.Handler {
	next := *h
	next.inner = h.inner.WithGroup(name)
	return &next
}
