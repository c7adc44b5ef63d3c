package clusterworkload

import (
	"bytes"
	"fmt"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"

	"sluice/core"
	"sluice/core/batch"
	corelog "sluice/core/log"
	"sluice/jepsen/history"
)

// Replica agreement: once the cluster has converged, every replica of a
// partition must hold the same log below the end the final drain found (a
// high watermark the leader served), from the highest log start among
// them (retention deletes each one's front on its own schedule; see
// retention.go): the same batches, byte for byte, so
// the same offsets, leader epochs, producer ids and records. The workload
// reads each replica's log from its machine's disk, as an operator would
// compare segment files: the partition directory's segments (*.log, named
// by base offset) hold batches back to back (see core/log's doc). What a
// replica's files show is exactly what its log serves, since reads see
// every write, synced or not.

const (
	// replicaCheckInterval is how often the workload looks at the
	// replicas while they catch up.
	replicaCheckInterval = 100 * time.Millisecond
	// segmentSuffix names a log segment file.
	segmentSuffix = ".log"
	// segmentBytesMax bounds a segment file the check reads whole.
	segmentBytesMax = 64 << 20
)

// storedBatch is one batch of a replica's log.
type storedBatch struct {
	header batch.Header
	bytes  []byte
}

// awaitReplicas waits, until deadline, for every replica of every
// partition to hold the partition's log up to its end, the same on every
// replica. Reaching the end is not enough: a replica that led an earlier
// epoch may hold a tail that was never committed and reaches past the
// end; it is caught up only once it has asked the current leader where
// its epochs diverge and cut that tail (KIP-279), which takes it a fetch
// round trip that a connection broken by the faults may delay for
// seconds. Replicas that still disagree at the deadline fail
// replica-divergence; replicas still short of the end fail
// replica-liveness.
func (r *run) awaitReplicas(ends map[history.TopicPartition]int64, deadline int64) bool {
	problem, diverged := "not looked at yet", false
	caughtUp := func() bool {
		problem, diverged = r.replicasBehind(ends)
		return problem == ""
	}
	if caughtUp() {
		return true
	}
	for r.violation == nil && !caughtUp() {
		next := r.kernel.Now() + int64(replicaCheckInterval)
		if next > deadline {
			if diverged {
				r.fail("replica-divergence", fmt.Sprintf("replicas still disagree %v after the heal: %s", r.scenario.Liveness, problem))
				return false
			}
			r.fail("replica-liveness", fmt.Sprintf("replicas did not catch up within %v of the heal: %s", r.scenario.Liveness, problem))
			return false
		}
		r.runWhile(next, func() bool { return true })
	}
	return r.violation == nil
}

// replicasBehind names a replica that does not yet hold its partition's
// log up to the end, or a partition whose replicas disagree below it
// (diverged), or returns "". It reads each replica's log once, keeps the
// logs as the run's latest look (see replicaLook) and compares those.
func (r *run) replicasBehind(ends map[history.TopicPartition]int64) (problem string, diverged bool) {
	partitions := sortedPartitions(ends)
	look := replicaLook{step: r.kernel.Steps(), logs: make(map[history.TopicPartition][]replicaLog, len(partitions))}
	for _, tp := range partitions {
		logs, problem := r.readLiveReplicaLogs(tp, func(name string, log replicaLog) string {
			if log.end < ends[tp] {
				return fmt.Sprintf("%s's %s ends at %d, below %d", name, tp, log.end, ends[tp])
			}
			return ""
		})
		if problem != "" {
			return problem, false
		}
		look.logs[tp] = logs
	}
	r.replicaLook = look
	for _, tp := range partitions {
		if problem, _ := r.compareReplicas(tp, ends[tp], look.logs[tp]); problem != "" {
			return problem, true
		}
	}
	return "", false
}

// readLiveReplicaLogs reads the log of every replica of tp, in the order
// r.replicas lists them, or names the first that is down, cannot be read,
// or is refused by accept (which names what is wrong with it, or returns
// ""). It stops there: a read may draw a disk fault, so a look reads no
// more than it needs.
func (r *run) readLiveReplicaLogs(tp history.TopicPartition, accept func(node string, log replicaLog) string) ([]replicaLog, string) {
	logs := make([]replicaLog, 0, len(r.replicas[tp]))
	for _, id := range r.replicas[tp] {
		n := r.nodes[id-1]
		if !n.up {
			return nil, n.name + " is down"
		}
		batches, end, err := readReplicaLog(n.machine.Disk, tp)
		if err != nil {
			return nil, fmt.Sprintf("%s's %s: %v", n.name, tp, err)
		}
		log := replicaLog{batches: batches, end: end}
		if problem := accept(n.name, log); problem != "" {
			return nil, problem
		}
		logs = append(logs, log)
	}
	return logs, ""
}

// replicaLook is what one look at the replicas read: each partition's
// replicas' logs, in the order r.replicas lists them, and the kernel step
// count when they were read. A disk changes only in an event, so while
// the kernel has taken no further step the logs are still what the disks
// hold, and checkReplicasAgree, which runs right after the liveness
// phase's last look, compares them instead of reading every log again.
type replicaLook struct {
	step uint64
	logs map[history.TopicPartition][]replicaLog
}

// replicaLog is one replica's log as read from its disk, or why it could
// not be read.
type replicaLog struct {
	batches []storedBatch
	// end is where the log ends (see readReplicaLog).
	end int64
	err error
}

// first is the offset the log starts at on disk: its first batch's, or
// for a log with none, its end.
func (l replicaLog) first() int64 {
	if len(l.batches) == 0 {
		return l.end
	}
	return l.batches[0].header.BaseOffset
}

// replicaLogs returns the logs of a partition's replicas, in the order
// r.replicas lists them: the latest look's if no step has run since it,
// else read now.
func (r *run) replicaLogs(tp history.TopicPartition) []replicaLog {
	if r.replicaLook.step == r.kernel.Steps() {
		if logs, looked := r.replicaLook.logs[tp]; looked {
			return logs
		}
	}
	logs := make([]replicaLog, 0, len(r.replicas[tp]))
	for _, id := range r.replicas[tp] {
		log, end, err := readReplicaLog(r.nodes[id-1].machine.Disk, tp)
		logs = append(logs, replicaLog{batches: log, end: end, err: err})
	}
	return logs
}

// checkReplicasAgree compares every replica's log below the end with the
// first replica's, batch by batch.
func (r *run) checkReplicasAgree() {
	for _, tp := range sortedPartitions(r.replicas) {
		if r.recreatedTopic(tp.Topic) {
			continue // checked on its own (recreate_check.go)
		}
		problem, compared := r.compareReplicas(tp, r.drainer.Position(tp), r.replicaLogs(tp))
		r.counts.replicasCompared += compared.replicas
		r.counts.batchesCompared += compared.batches
		if problem != "" {
			r.fail("replica-divergence", problem)
			return
		}
	}
}

// comparison counts what compareReplicas compared.
type comparison struct {
	replicas, batches int
}

// compareReplicas compares every replica's log of a partition below end
// with the first replica's, batch by batch, and says how they differ, or
// returns "". logs are the replicas' logs, in the order r.replicas lists
// them; they are only read, never changed.
func (r *run) compareReplicas(tp history.TopicPartition, end int64, logs []replicaLog) (string, comparison) {
	// Retention deletes each replica's oldest segments on its own
	// schedule: compare from the highest start among them. And nothing
	// below the log start the final leader answered is readable: a
	// replica may keep a batch there that diverges (written by a leader
	// that lost its uncommitted tail, then moved past by the new
	// leader's deletions, where KIP-279's check cannot see it, as in
	// Kafka), bound for deletion.
	start, _ := commonStart(logs)
	if r.drainer != nil {
		start = max(start, r.drainer.LogStart(tp))
	}
	problem, compared := r.compareReplicasFrom(tp, start, end, logs)
	if problem == "" {
		return "", compared
	}
	// The same holds below a replica's own log start, which its files do
	// not show (a segment goes only once it is wholly below the start):
	// a follower whose start followed a deletion past such a batch keeps
	// it there, unreadable, while a leader that had not followed the
	// deletion serves the records below it. Each replica is then compared
	// from its own start, which its checkpoint records; that is read only
	// now, when the replicas differ, since every read may draw a disk
	// fault, which would move the run.
	starts := make([]int64, len(logs))
	moved := false
	for i, id := range r.replicas[tp] {
		starts[i] = start
		dir := fmt.Sprintf("%s-%d", tp.Topic, tp.Partition)
		if at, err := corelog.CheckpointedStart(r.nodes[id-1].machine.Disk, dir); err == nil && at > start {
			starts[i], moved = at, true
		}
	}
	if moved {
		return r.compareReplicasFromEach(tp, starts, end, logs)
	}
	return problem, compared
}

// compareReplicasFromEach compares each replica's log from its own start
// (starts, in r.replicas' order) with the log of the replica that starts
// lowest, from the later of their two starts: every offset two replicas
// both serve is compared, through the one that serves the most.
func (r *run) compareReplicasFromEach(tp history.TopicPartition, starts []int64, end int64, logs []replicaLog) (string, comparison) {
	var compared comparison
	ref := 0
	for i := range starts {
		if logs[i].err != nil {
			return fmt.Sprintf("%s's %s cannot be read: %v", r.nodes[r.replicas[tp][i]-1].name, tp, logs[i].err), compared
		}
		if starts[i] < starts[ref] {
			ref = i
		}
	}
	referenceNode := r.nodes[r.replicas[tp][ref]-1].name
	reference := from(below(logs[ref].batches, end), starts[ref])
	if problem := checkContiguous(reference, starts[ref], end); problem != "" {
		return fmt.Sprintf("%s's %s below its end %d: %s", referenceNode, tp, end, problem), compared
	}
	compared.replicas++
	for i, id := range r.replicas[tp] {
		if i == ref {
			continue
		}
		start := max(starts[ref], starts[i])
		committed := from(below(logs[i].batches, end), start)
		compared.replicas++
		if problem := compareLogs(from(reference, start), committed); problem != "" {
			return fmt.Sprintf("%s below its end %d, from %d: %s has %s; %s", tp, end, start, referenceNode, problem, r.nodes[id-1].name), compared
		}
		compared.batches += len(committed)
	}
	return "", compared
}

// compareReplicasFrom is compareReplicas from a start offset.
func (r *run) compareReplicasFrom(tp history.TopicPartition, start, end int64, logs []replicaLog) (string, comparison) {
	var compared comparison
	var reference []storedBatch
	referenceNode := ""
	for i, id := range r.replicas[tp] {
		n := r.nodes[id-1]
		if logs[i].err != nil {
			return fmt.Sprintf("%s's %s cannot be read: %v", n.name, tp, logs[i].err), compared
		}
		committed := from(below(logs[i].batches, end), start)
		compared.replicas++
		if referenceNode == "" {
			reference, referenceNode = committed, n.name
			if problem := checkContiguous(committed, start, end); problem != "" {
				return fmt.Sprintf("%s's %s below its end %d: %s", n.name, tp, end, problem), compared
			}
			continue
		}
		if problem := compareLogs(reference, committed); problem != "" {
			return fmt.Sprintf("%s below its end %d: %s has %s; %s", tp, end, referenceNode, problem, n.name), compared
		}
		compared.batches += len(committed)
	}
	return "", compared
}

// readReplicaLog reads every batch of a partition's log from a disk, and
// where the log ends: after its last batch, or at its last segment's base
// offset when that is further (a log whose records were all deleted keeps
// an empty segment where the next one goes).
func readReplicaLog(disk core.FS, tp history.TopicPartition) ([]storedBatch, int64, error) {
	dir := fmt.Sprintf("%s-%d", tp.Topic, tp.Partition)
	names, err := disk.ReadDir(dir)
	if err != nil {
		return nil, 0, err
	}
	var log []storedBatch
	segmentBase := int64(0)
	for _, name := range names { // sorted: zero-padded base offsets
		if !strings.HasSuffix(name, segmentSuffix) {
			continue
		}
		base, err := strconv.ParseInt(strings.TrimSuffix(name, segmentSuffix), 10, 64)
		if err != nil {
			return nil, 0, fmt.Errorf("segment %s: not named by its base offset: %v", name, err)
		}
		segmentBase = max(segmentBase, base)
		data, err := core.ReadWhole(disk, path.Join(dir, name), segmentBytesMax)
		if err != nil {
			return nil, 0, err
		}
		log = slices.Grow(log, batchesIn(data))
		s := batch.Scanner{Buf: data, VerifyCRC: true}
		for s.Next() {
			log = append(log, storedBatch{header: s.Header(), bytes: s.Batch()})
		}
		if s.Err() != nil || s.Position() != len(data) {
			return nil, 0, fmt.Errorf("segment %s: %d of %d bytes are whole batches: %v", name, s.Position(), len(data), s.Err())
		}
	}
	return log, max(logEnd(log), segmentBase), nil
}

// batchesIn counts the whole batches at the start of a segment's data,
// without checking their CRCs, so that readReplicaLog grows its log once
// per segment rather than batch by batch.
func batchesIn(data []byte) int {
	count := 0
	for s := (batch.Scanner{Buf: data}); s.Next(); {
		count++
	}
	return count
}

// logEnd is the offset after a log's last batch.
func logEnd(log []storedBatch) int64 {
	if len(log) == 0 {
		return 0
	}
	return log[len(log)-1].header.NextOffset()
}

// below keeps the batches wholly below end. It leaves log as it is (a
// look's logs are compared more than once): when the batches it keeps are
// all the first ones, as in any log whose offsets ascend, it returns that
// prefix of log, else a copy.
func below(log []storedBatch, end int64) []storedBatch {
	wholly := func(b storedBatch) bool { return b.header.LastOffset() < end }
	prefix := 0
	for prefix < len(log) && wholly(log[prefix]) {
		prefix++
	}
	if !slices.ContainsFunc(log[prefix:], wholly) {
		return log[:prefix:prefix]
	}
	kept := slices.Clone(log[:prefix])
	for _, b := range log[prefix:] {
		if wholly(b) {
			kept = append(kept, b)
		}
	}
	return kept
}

// checkContiguous requires batches that cover [start, end) without a gap;
// the first may begin below start, holding it.
func checkContiguous(log []storedBatch, start, end int64) string {
	next := start
	for i, b := range log {
		holdsStart := i == 0 && b.header.BaseOffset < next && b.header.LastOffset() >= next
		if b.header.BaseOffset != next && !holdsStart {
			return fmt.Sprintf("a batch at offset %d where %d was next", b.header.BaseOffset, next)
		}
		next = b.header.NextOffset()
	}
	if next != end {
		return fmt.Sprintf("the batches end at %d", next)
	}
	return ""
}

// compareLogs says how two replicas' logs differ, or returns "".
func compareLogs(want, got []storedBatch) string {
	for i := range max(len(want), len(got)) {
		switch {
		case i >= len(got):
			return fmt.Sprintf("%s, which is missing", describeBatch(want[i]))
		case i >= len(want):
			return fmt.Sprintf("nothing where %s", describeBatch(got[i]))
		case !bytes.Equal(want[i].bytes, got[i].bytes):
			return fmt.Sprintf("%s where %s", describeBatch(want[i]), describeBatch(got[i]))
		}
	}
	return ""
}

func describeBatch(b storedBatch) string {
	h := b.header
	return fmt.Sprintf("the batch at offsets %d-%d in leader epoch %d (producer %d, crc %08x)",
		h.BaseOffset, h.LastOffset(), h.LeaderEpoch, h.ProducerID, h.CRC)
}

// segmentsMax is the most segment files any replica of the run's topics
// holds: proof that a scenario with small segments rolled them.
func (r *run) segmentsMax() int {
	most := 0
	for _, tp := range sortedPartitions(r.replicas) {
		for _, id := range r.replicas[tp] {
			names, err := r.nodes[id-1].machine.Disk.ReadDir(fmt.Sprintf("%s-%d", tp.Topic, tp.Partition))
			if err != nil {
				continue
			}
			segments := 0
			for _, name := range names {
				if strings.HasSuffix(name, segmentSuffix) {
					segments++
				}
			}
			most = max(most, segments)
		}
	}
	return most
}
