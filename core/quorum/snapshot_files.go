package quorum

import (
	"encoding/binary"
	"errors"
	"fmt"
	"path"
	"sort"
	"strconv"
	"strings"

	"github.com/twmb/franz-go/pkg/kmsg"

	"sluice/core"
	"sluice/core/batch"
	"sluice/core/metadata"
)

// A snapshot is the metadata state as of an offset, so that the log before
// it can go (KIP-630). Its id is KRaft's: the end offset (the offset after
// the last batch it covers) and the epoch of that last batch. It lives in
// the metadata log directory as <end offset, 20 digits>-<epoch, 10
// digits>.checkpoint, written as a temporary file, synced and renamed, so a
// crash leaves it whole or absent.
//
// Its bytes are record batches, each with its CRC, as Kafka's are:
//
//	control batch   SnapshotHeader: end offset, epoch, the state's last offset
//	data batches    the records, snapshotRecordsPerBatch to a batch
//	control batch   SnapshotFooter: how many records there are
//
// The footer proves the file complete, the CRCs that its bytes are intact.
type snapshotID struct {
	endOffset int64
	epoch     int32
}

func (id snapshotID) String() string { return fmt.Sprintf("%d-%d", id.endOffset, id.epoch) }

const snapshotSuffix = ".checkpoint"

func (id snapshotID) fileName() string {
	return fmt.Sprintf("%020d-%010d%s", id.endOffset, id.epoch, snapshotSuffix)
}

// parseSnapshotName reads a snapshot file name, reporting false for any
// other name.
func parseSnapshotName(name string) (snapshotID, bool) {
	stem, found := strings.CutSuffix(name, snapshotSuffix)
	offsetText, epochText, cut := strings.Cut(stem, "-")
	if !found || !cut || len(offsetText) != 20 || len(epochText) != 10 {
		return snapshotID{}, false
	}
	offset, err1 := strconv.ParseInt(offsetText, 10, 64)
	epoch, err2 := strconv.ParseInt(epochText, 10, 32)
	if err1 != nil || err2 != nil || offset < 0 || epoch < 0 {
		return snapshotID{}, false
	}
	return snapshotID{endOffset: offset, epoch: int32(epoch)}, true
}

// snapshotContent is a decoded snapshot.
type snapshotContent struct {
	id         snapshotID
	lastOffset int64 // the Snapshotter's last offset
	records    []metadata.Record
}

// snapshotHeaderBytes is the header record's value: end offset, epoch, last
// offset.
const snapshotHeaderBytes = 8 + 4 + 8

// encodeSnapshot writes a snapshot's bytes.
func encodeSnapshot(c snapshotContent, timestamp int64) []byte {
	header := binary.BigEndian.AppendUint64(nil, uint64(c.id.endOffset))
	header = binary.BigEndian.AppendUint32(header, uint32(c.id.epoch))
	header = binary.BigEndian.AppendUint64(header, uint64(c.lastOffset))
	var out []byte
	next := int64(0)
	appendBatch := func(b []byte) {
		batch.SetBaseOffset(b, next)
		batch.SetLeaderEpoch(b, c.id.epoch)
		h, err := batch.Parse(b)
		if err != nil {
			panic(fmt.Sprintf("quorum: built a bad snapshot batch: %v", err))
		}
		next = h.NextOffset()
		out = append(out, b...)
	}
	appendBatch(controlBatch(controlTypeSnapshotHeader, header, timestamp, c.id.epoch))
	var values []byte // every batch's records are encoded in it in turn
	for start := 0; start < len(c.records); start += snapshotRecordsPerBatch {
		spec := batch.Spec{BaseTimestamp: timestamp, ProducerID: batch.NoProducerID}
		spec.Records, values = encodeRecords(c.records[start:min(start+snapshotRecordsPerBatch, len(c.records))], values[:0])
		appendBatch(batch.Build(spec))
	}
	appendBatch(controlBatch(controlTypeSnapshotFooter, binary.BigEndian.AppendUint64(nil, uint64(len(c.records))), timestamp, c.id.epoch))
	return out
}

// decodeSnapshot reads a snapshot's bytes. Anything that does not check out
// is errBadData.
func decodeSnapshot(b []byte) (snapshotContent, error) {
	bad := func(format string, args ...any) (snapshotContent, error) {
		return snapshotContent{}, fmt.Errorf("%w: snapshot: %s", errBadData, fmt.Sprintf(format, args...))
	}
	var c snapshotContent
	s := batch.Scanner{Buf: b, VerifyCRC: true}
	sawHeader, sawFooter := false, false
	for s.Next() {
		h := s.Header()
		records, err := batch.Records(s.Batch())
		if err != nil {
			return bad("batch at %d: %v", h.BaseOffset, err)
		}
		if sawFooter {
			return bad("batch after the footer")
		}
		if !h.IsControl() {
			if !sawHeader {
				return bad("data before the header")
			}
			for _, r := range records {
				record, err := metadata.DecodeRecord(r.Value)
				if err != nil {
					return bad("record: %v", err)
				}
				c.records = append(c.records, record)
			}
			continue
		}
		if len(records) != 1 {
			return bad("control batch of %d records", len(records))
		}
		var key kmsg.ControlRecordKey
		if err := key.ReadFrom(records[0].Key); err != nil {
			return bad("control key: %v", err)
		}
		value := records[0].Value
		switch {
		case key.Type == controlTypeSnapshotHeader && !sawHeader && len(value) == snapshotHeaderBytes:
			sawHeader = true
			c.id.endOffset = int64(binary.BigEndian.Uint64(value))
			c.id.epoch = int32(binary.BigEndian.Uint32(value[8:]))
			c.lastOffset = int64(binary.BigEndian.Uint64(value[12:]))
		case key.Type == controlTypeSnapshotFooter && sawHeader && len(value) == 8:
			sawFooter = true
			if count := int64(binary.BigEndian.Uint64(value)); count != int64(len(c.records)) {
				return bad("footer counts %d records, found %d", count, len(c.records))
			}
		default:
			return bad("unexpected control record type %d", key.Type)
		}
	}
	if s.Err() != nil {
		return bad("%v", s.Err())
	}
	if !sawFooter {
		return bad("no footer")
	}
	return c, nil
}

// listSnapshots returns the ids of the snapshot files in dir, oldest first.
func listSnapshots(fsys core.FS, dir string) ([]snapshotID, error) {
	names, err := fsys.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var ids []snapshotID
	for _, name := range names {
		if id, ok := parseSnapshotName(name); ok {
			ids = append(ids, id)
		}
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i].endOffset < ids[j].endOffset })
	return ids, nil
}

// readSnapshot reads and checks the snapshot file for id.
func readSnapshot(fsys core.FS, dir string, id snapshotID) (snapshotContent, error) {
	c, err := readChecked(fsys, path.Join(dir, id.fileName()), snapshotBytesMax, decodeSnapshot)
	if err == nil && c.id != id {
		err = fmt.Errorf("%w: snapshot %s says it is %s", errBadData, id, c.id)
	}
	return c, err
}

// writeSnapshotFile writes a snapshot durably, then calls done: a temporary
// file, synced, renamed, and the directory synced. A write that runs out of
// space reports the error; a failed sync halts the node.
func writeSnapshotFile(w core.World, dir string, id snapshotID, content []byte, done func(error)) {
	temporary := path.Join(dir, id.fileName()+temporarySuffix)
	f, err := w.FS.OpenFile(temporary, true)
	if err == nil {
		if err = f.Truncate(0); err == nil {
			_, err = f.WriteAt(content, 0)
		}
		if err != nil {
			f.Close()
			w.FS.Remove(temporary)
		}
	}
	if err != nil {
		w.Clock.AfterFunc(0, func() { done(err) })
		return
	}
	syncAndRename(w, f, temporary, path.Join(dir, id.fileName()), dir, done)
}

// syncAndRename syncs a written temporary file, renames it to its name and
// syncs the directory, then calls done; a failed sync halts.
func syncAndRename(w core.World, f core.File, temporary, final, dir string, done func(error)) {
	f.Sync(func(err error) {
		f.Close()
		if err == nil {
			err = w.FS.Rename(temporary, final)
		}
		if err != nil {
			w.Halt(fmt.Errorf("quorum: writing %s: %w", final, err))
			return
		}
		w.FS.SyncDir(dir, func(err error) {
			if err != nil {
				w.Halt(fmt.Errorf("quorum: syncing %s: %w", dir, err))
				return
			}
			done(nil)
		})
	})
}

// errSnapshotMissing reports a log that starts past every readable snapshot.
var errSnapshotMissing = errors.New("quorum: the metadata log starts after the last readable snapshot")
