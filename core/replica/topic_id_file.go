package replica

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"time"

	"sluice/core"
	"sluice/core/metadata"
)

// A partition directory is named by topic name and partition index only,
// so it does not say which topic of that name it belongs to. A topic
// deleted and created again under the same name is a new topic (a new
// id, an empty log), yet a node can meet the old topic's directory under
// the new topic's name: the deletion renamed it aside, and a power loss
// took the rename back before it was synced; or the node was down while
// the deletion happened and learns of it only from a metadata snapshot,
// which holds the new topic and no trace of the old. Opening that
// directory would serve the deleted topic's records as the new topic's.
//
// So every partition directory holds partition.metadata, Kafka's file for
// this since KIP-516 ("version: 0", then "topic_id: " and the id in
// URL-safe base64 without padding). Open refuses a directory whose file
// names another topic id (OtherTopicIDError); the broker removes the
// directory and opens the partition afresh, as Kafka's stray-log
// detection does.
//
// The file must be durable before any record is: otherwise a power loss
// could leave a directory holding records and no file, which says nothing
// of its topic. A replica whose directory has no file yet writes one
// (temporary, sync, rename, sync the directory) and, until that is
// done, neither leads nor fetches as a follower (see topicIDPending), so
// no record reaches it. A directory with records and no file is one
// written before Sluice kept the file: Open adopts it for the topic it is
// opened as and writes the file, as Kafka does for logs from before
// KIP-516. A file that cannot be read keeps the partition closed on this
// node (readTopicIDFile).

const (
	topicIDFileName = "partition.metadata"
	// topicIDFileBytesMax bounds the file read at open: it is about 50
	// bytes.
	topicIDFileBytesMax = 4 << 10
	// topicIDReadAttemptsMax bounds the reads of the file at open (see
	// readTopicIDFile): enough that even a bus flipping a bit in two
	// reads of five nearly always yields three clean ones in a row, since
	// a file never read alike keeps the partition closed.
	topicIDReadAttemptsMax = 24
	// topicIDRetryInterval is how long a replica waits to write its
	// file again after a write was refused (a full disk).
	topicIDRetryInterval = time.Second
)

// OtherTopicIDError is Open's refusal of a directory that belongs to
// another topic of the same name, one since deleted.
type OtherTopicIDError struct {
	Dir   string
	Found metadata.TopicID
	Want  metadata.TopicID
}

func (e *OtherTopicIDError) Error() string {
	return fmt.Sprintf("replica: %s belongs to topic id %s, not %s", e.Dir, e.Found, e.Want)
}

// encodeTopicIDFile is the file's content for id.
func encodeTopicIDFile(id metadata.TopicID) []byte {
	const prefix = "version: 0\ntopic_id: "
	b := make([]byte, 0, len(prefix)+base64.RawURLEncoding.EncodedLen(len(id))+1)
	b = append(b, prefix...)
	b = base64.RawURLEncoding.AppendEncode(b, id[:])
	return append(b, '\n')
}

// decodeTopicIDFile reads the file's content.
func decodeTopicIDFile(data []byte) (metadata.TopicID, error) {
	var id metadata.TopicID
	lines := bytes.Split(bytes.TrimRight(data, "\n"), []byte("\n"))
	if len(lines) != 2 || string(lines[0]) != "version: 0" {
		return id, fmt.Errorf("not a version 0 %s: %q", topicIDFileName, data)
	}
	encoded, ok := bytes.CutPrefix(lines[1], []byte("topic_id: "))
	if !ok {
		return id, fmt.Errorf("no topic_id line: %q", lines[1])
	}
	decoded, err := base64.RawURLEncoding.DecodeString(string(encoded))
	if err != nil || len(decoded) != len(id) {
		return id, fmt.Errorf("bad topic id %q", encoded)
	}
	copy(id[:], decoded)
	return id, nil
}

// readTopicIDFile returns the topic id dir's file names, and false when
// there is no directory or no file. The file has no checksum (it is
// Kafka's), so it is read until three reads in a row agree (see
// core.ReadWholeStable): a bit flipped on the way from the disk must not
// make the directory another topic's, which would delete it. A file that
// never reads alike, or that reads alike as something else than the file,
// is an error: the disk has failed under it (the file is written whole
// under a temporary name, synced, then renamed, so a crash cannot tear
// it), and the partition stays closed on this node rather than guess whose
// records these are.
func readTopicIDFile(w core.World, dir string) (metadata.TopicID, bool, error) {
	name := path.Join(dir, topicIDFileName)
	data, err := core.ReadWholeStable(w.FS, name, topicIDFileBytesMax, topicIDReadAttemptsMax)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return metadata.TopicID{}, false, nil
	case err != nil:
		return metadata.TopicID{}, false, fmt.Errorf("replica: reading %s: %w", name, err)
	}
	id, err := decodeTopicIDFile(data)
	if err != nil {
		return metadata.TopicID{}, false, fmt.Errorf("replica: %s: %w", name, err)
	}
	return id, true, nil
}

// writeTopicIDFile makes the replica's topic id durable in its directory,
// then lets it take up its role. A write the disk refuses is tried again
// after topicIDRetryInterval; a failed sync halts the node, as every
// failed sync does.
func (p *Partition) writeTopicIDFile() {
	if p.closed {
		return
	}
	final := path.Join(p.dir, topicIDFileName)
	temporary := final + ".tmp"
	f, err := p.w.FS.OpenFile(temporary, true)
	if err == nil {
		if err = f.Truncate(0); err == nil {
			_, err = f.WriteAt(encodeTopicIDFile(p.TopicID), 0)
		}
		if err != nil {
			f.Close()
			p.w.FS.Remove(temporary)
		}
	}
	if err != nil {
		p.logger.Info("partition.metadata not written; trying again", "error", err)
		p.w.Clock.AfterFunc(topicIDRetryInterval, p.writeTopicIDFile)
		return
	}
	f.Sync(func(err error) {
		f.Close()
		if err != nil {
			p.w.Halt(fmt.Errorf("replica: syncing %s: %w", temporary, err))
			return
		}
		if p.closed {
			return
		}
		if err := p.w.FS.Rename(temporary, final); err != nil {
			p.logger.Warn("partition.metadata not renamed; trying again", "error", err)
			p.w.Clock.AfterFunc(topicIDRetryInterval, p.writeTopicIDFile)
			return
		}
		p.w.FS.SyncDir(p.dir, func(err error) {
			if err != nil {
				p.w.Halt(fmt.Errorf("replica: syncing %s: %w", p.dir, err))
				return
			}
			p.topicIDDurable()
		})
	})
}

// topicIDDurable lets a replica whose file is now durable lead and fetch.
func (p *Partition) topicIDDurable() {
	if p.closed || !p.topicIDPending {
		return
	}
	p.topicIDPending = false
	p.maybeRecovered()
	p.notifyFetchReady()
}
