package clusterworkload

import (
	"bytes"
	"fmt"
	"path"
	"slices"
	"strings"
	"time"

	"sluice/core"
	"sluice/core/batch"
	"sluice/jepsen/history"
)

// Replica agreement: once the cluster has converged, every replica of a
// partition must hold the same log below the end the final drain found (a
// high watermark the leader served): the same batches, byte for byte, so
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
// (diverged), or returns "".
func (r *run) replicasBehind(ends map[history.TopicPartition]int64) (problem string, diverged bool) {
	for _, tp := range sortedPartitions(ends) {
		for _, id := range r.replicas[tp] {
			n := r.nodes[id-1]
			if !n.up {
				return n.name + " is down", false
			}
			log, err := readReplicaLog(n.machine.Disk, tp)
			if err != nil {
				return fmt.Sprintf("%s's %s: %v", n.name, tp, err), false
			}
			if end := logEnd(log); end < ends[tp] {
				return fmt.Sprintf("%s's %s ends at %d, below %d", n.name, tp, end, ends[tp]), false
			}
		}
	}
	for _, tp := range sortedPartitions(ends) {
		if problem, _ := r.compareReplicas(tp, ends[tp]); problem != "" {
			return problem, true
		}
	}
	return "", false
}

// checkReplicasAgree compares every replica's log below the end with the
// first replica's, batch by batch.
func (r *run) checkReplicasAgree() {
	for _, tp := range sortedPartitions(r.replicas) {
		problem, compared := r.compareReplicas(tp, r.drainer.Position(tp))
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
// returns "".
func (r *run) compareReplicas(tp history.TopicPartition, end int64) (string, comparison) {
	var compared comparison
	var reference []storedBatch
	referenceNode := ""
	for _, id := range r.replicas[tp] {
		n := r.nodes[id-1]
		log, err := readReplicaLog(n.machine.Disk, tp)
		if err != nil {
			return fmt.Sprintf("%s's %s cannot be read: %v", n.name, tp, err), compared
		}
		committed := below(log, end)
		compared.replicas++
		if referenceNode == "" {
			reference, referenceNode = committed, n.name
			if problem := checkContiguous(committed, end); problem != "" {
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

// readReplicaLog reads every batch of a partition's log from a disk.
func readReplicaLog(disk core.FS, tp history.TopicPartition) ([]storedBatch, error) {
	dir := fmt.Sprintf("%s-%d", tp.Topic, tp.Partition)
	names, err := disk.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var log []storedBatch
	for _, name := range names { // sorted: zero-padded base offsets
		if !strings.HasSuffix(name, segmentSuffix) {
			continue
		}
		data, err := core.ReadWhole(disk, path.Join(dir, name), segmentBytesMax)
		if err != nil {
			return nil, err
		}
		log = slices.Grow(log, batchesIn(data))
		s := batch.Scanner{Buf: data, VerifyCRC: true}
		for s.Next() {
			log = append(log, storedBatch{header: s.Header(), bytes: s.Batch()})
		}
		if s.Err() != nil || s.Position() != len(data) {
			return nil, fmt.Errorf("segment %s: %d of %d bytes are whole batches: %v", name, s.Position(), len(data), s.Err())
		}
	}
	return log, nil
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

// below keeps the batches wholly below end. It filters log in place:
// callers pass a log read for this comparison alone and use only what
// below returns.
func below(log []storedBatch, end int64) []storedBatch {
	return slices.DeleteFunc(log, func(b storedBatch) bool { return b.header.LastOffset() >= end })
}

// checkContiguous requires batches that cover [0, end) without a gap.
func checkContiguous(log []storedBatch, end int64) string {
	next := int64(0)
	for _, b := range log {
		if b.header.BaseOffset != next {
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
