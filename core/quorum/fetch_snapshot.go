package quorum

import (
	"errors"
	"io"
	"path"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"sluice/core"
)

// FetchSnapshot (API key 59, KIP-630). A follower whose fetch offset lies
// below the leader's log start is told the leader's latest snapshot id in
// the Fetch answer; it downloads the snapshot in chunks of at most
// snapshotChunkBytes, each at the position after the last, writes it to a
// temporary file, and once whole syncs and renames it, checks it, and adopts
// it: the Snapshotter restores it and the log restarts at its end. Then it
// fetches from there. Any failure abandons the download; the next Fetch
// starts it again. Sluice sends and answers v0.

const fetchSnapshotVersion = 0

// snapshotDownload is a snapshot being fetched from the leader.
type snapshotDownload struct {
	id       snapshotID
	file     core.File
	position int64
	size     int64 // -1 until the first chunk says
	// finishing: every byte is in; the file is being synced and renamed.
	finishing bool
}

func (d *snapshotDownload) temporaryName() string { return d.id.fileName() + temporarySuffix }

// HandleFetchSnapshot serves a chunk of one of the leader's snapshots.
func (q *Quorum) HandleFetchSnapshot(req *kmsg.FetchSnapshotRequest, done func(*kmsg.FetchSnapshotResponse)) {
	resp := req.ResponseKind().(*kmsg.FetchSnapshotResponse)
	if len(req.Topics) != 1 || req.Topics[0].Topic != MetadataTopic || len(req.Topics[0].Partitions) != 1 || req.Topics[0].Partitions[0].Partition != 0 {
		resp.ErrorCode = kerr.InvalidRequest.Code
		done(resp)
		return
	}
	p := req.Topics[0].Partitions[0]
	topic := kmsg.NewFetchSnapshotResponseTopic()
	topic.Topic = MetadataTopic
	part := kmsg.NewFetchSnapshotResponseTopicPartition()
	part.SnapshotID.EndOffset, part.SnapshotID.Epoch = p.SnapshotID.EndOffset, p.SnapshotID.Epoch
	part.CurrentLeader.LeaderID, part.CurrentLeader.LeaderEpoch = q.knownLeader(), q.epoch
	answer := func(code int16) {
		part.ErrorCode = code
		topic.Partitions = append(topic.Partitions, part)
		resp.Topics = append(resp.Topics, topic)
		done(resp)
	}
	id := snapshotID{endOffset: p.SnapshotID.EndOffset, epoch: p.SnapshotID.Epoch}
	switch {
	case q.closed || !q.IsLeader():
		answer(notLeaderCode)
		return
	case p.CurrentLeaderEpoch < q.epoch:
		answer(kerr.FencedLeaderEpoch.Code)
		return
	case p.CurrentLeaderEpoch > q.epoch:
		answer(kerr.UnknownLeaderEpoch.Code)
		return
	case !q.hasSnapshot(id):
		answer(kerr.SnapshotNotFound.Code)
		return
	}
	if progress, ok := q.leader.replicas[req.ReplicaID]; ok {
		// A follower downloading a snapshot is alive (check-quorum).
		progress.fetched, progress.lastFetch = true, q.world.Clock.Elapsed()
	}
	f, err := q.world.FS.OpenFile(path.Join(q.dir, id.fileName()), false)
	if err != nil {
		answer(kerr.SnapshotNotFound.Code)
		return
	}
	defer f.Close()
	size, err := f.Size()
	if err != nil || p.Position < 0 || p.Position > size {
		answer(kerr.PositionOutOfRange.Code)
		return
	}
	chunk := int64(snapshotChunkBytes)
	if req.MaxBytes > 0 {
		chunk = min(chunk, int64(req.MaxBytes))
	}
	if q.world.Buggify.Hit(core.BuggifyQuorumSnapshotSmallChunks) {
		chunk = min(chunk, snapshotChunkBytesSmall)
	}
	buffer := make([]byte, min(chunk, size-p.Position))
	n, err := f.ReadAt(buffer, p.Position)
	if err != nil && !(errors.Is(err, io.EOF) && n == len(buffer)) {
		answer(kerr.KafkaStorageError.Code)
		return
	}
	part.Size, part.Position, part.Bytes = size, p.Position, buffer
	answer(0)
}

func (q *Quorum) hasSnapshot(id snapshotID) bool {
	for _, s := range q.snapshots {
		if s == id {
			return true
		}
	}
	return false
}

// startSnapshotDownload begins fetching the leader's snapshot.
func (q *Quorum) startSnapshotDownload(id snapshotID) {
	if id.endOffset < q.appliedEnd {
		panic(q.describeLog("the leader offers snapshot " + id.String() + " below what was applied"))
	}
	d := &snapshotDownload{id: id, size: -1}
	f, err := q.world.FS.OpenFile(path.Join(q.dir, d.temporaryName()), true)
	if err == nil {
		err = f.Truncate(0)
	}
	if err != nil {
		q.logger.Warn("snapshot download not started", "snapshot", id.String(), "error", err)
		q.retryFetch()
		return
	}
	d.file = f
	q.fetcher.download = d
	q.eventLogger().Info("downloading snapshot", "snapshot", id.String(), "leader", q.leaderID)
	q.requestSnapshotChunk()
}

// requestSnapshotChunk asks for the bytes after those received.
func (q *Quorum) requestSnapshotChunk() {
	d := q.fetcher.download
	req := kmsg.NewPtrFetchSnapshotRequest()
	req.Version = fetchSnapshotVersion
	req.ReplicaID = q.config.NodeID
	req.MaxBytes = snapshotChunkBytes
	topic := kmsg.NewFetchSnapshotRequestTopic()
	topic.Topic = MetadataTopic
	p := kmsg.NewFetchSnapshotRequestTopicPartition()
	p.CurrentLeaderEpoch = q.epoch
	p.SnapshotID.EndOffset, p.SnapshotID.Epoch = d.id.endOffset, d.id.epoch
	p.Position = d.position
	topic.Partitions = append(topic.Partitions, p)
	req.Topics = append(req.Topics, topic)
	generation := q.generation
	q.peers.Request(q.leaderID, req, q.config.RequestTimeout, func(resp kmsg.Response, err error) {
		if q.closed || q.generation != generation || q.fetcher.download != d {
			return
		}
		if err != nil {
			q.abandonSnapshotDownload()
			q.retryFetch()
			return
		}
		q.handleSnapshotChunk(resp.(*kmsg.FetchSnapshotResponse))
	})
}

// handleSnapshotChunk writes one chunk, and asks for the next or finishes.
func (q *Quorum) handleSnapshotChunk(resp *kmsg.FetchSnapshotResponse) {
	d := q.fetcher.download
	fail := func(why string, args ...any) {
		q.logger.Warn("snapshot download abandoned: "+why, append([]any{"snapshot", d.id.String()}, args...)...)
		q.abandonSnapshotDownload()
		q.retryFetch()
	}
	if resp.ErrorCode != 0 || len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 {
		fail("bad answer")
		return
	}
	p := resp.Topics[0].Partitions[0]
	if p.ErrorCode != 0 {
		if !q.learnLeader(p.CurrentLeader.LeaderID, p.CurrentLeader.LeaderEpoch) {
			fail("error", "code", p.ErrorCode)
		}
		return
	}
	q.heardFromLeader()
	switch {
	case p.SnapshotID.EndOffset != d.id.endOffset || p.SnapshotID.Epoch != d.id.epoch || p.Position != d.position:
		fail("answer for another snapshot or position", "position", p.Position)
		return
	case p.Size < 0 || p.Size > snapshotBytesMax || (d.size >= 0 && p.Size != d.size):
		fail("impossible size", "size", p.Size)
		return
	case int64(len(p.Bytes)) > p.Size-d.position || (len(p.Bytes) == 0 && d.position < p.Size):
		fail("chunk does not fit", "bytes", len(p.Bytes), "size", p.Size)
		return
	}
	d.size = p.Size
	if _, err := d.file.WriteAt(p.Bytes, d.position); err != nil {
		fail("write failed", "error", err)
		return
	}
	d.position += int64(len(p.Bytes))
	if d.position < d.size {
		q.requestSnapshotChunk()
		return
	}
	d.finishing = true
	final := path.Join(q.dir, d.id.fileName())
	generation := q.generation
	syncAndRename(q.world, d.file, path.Join(q.dir, d.temporaryName()), final, q.dir, func(error) {
		if q.closed {
			return
		}
		if q.generation != generation || q.fetcher.download != d {
			// The role ended meanwhile; the snapshot is whole and
			// durable, and may serve a later install.
			return
		}
		q.fetcher.download = nil
		q.installSnapshot(d.id)
	})
}

// installSnapshot adopts a downloaded snapshot that is now on disk.
func (q *Quorum) installSnapshot(id snapshotID) {
	content, err := readSnapshot(q.world.FS, q.dir, id)
	if err != nil {
		q.logger.Warn("downloaded snapshot unreadable; fetching again", "snapshot", id.String(), "error", err)
		q.world.FS.Remove(path.Join(q.dir, id.fileName()))
		q.retryFetch()
		return
	}
	q.addSnapshot(id)
	if id.endOffset <= q.appliedEnd {
		// Nothing new in it: it only lets the log start move.
		q.alignLogWithSnapshot(id)
	} else if err := q.adoptSnapshot(content); err != nil {
		q.closed = true
		q.world.Halt(err)
		return
	}
	q.checkInvariants()
	q.maybeFetch()
}

// abandonSnapshotDownload drops a download in progress and its temporary
// file. A download already syncing its file is left to finish.
func (q *Quorum) abandonSnapshotDownload() {
	d := q.fetcher.download
	if d == nil {
		return
	}
	q.fetcher.download = nil
	if d.finishing {
		return
	}
	d.file.Close()
	q.world.FS.Remove(path.Join(q.dir, d.temporaryName()))
}
