package quorum

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"io/fs"
	"path"
	"strconv"
	"strings"

	"sluice/core"
)

// electionState is what a node must remember about elections across
// restarts, KRaft's quorum-state file: the latest epoch it knows, whom it
// voted for in that epoch, and that epoch's leader if it knows it. Raft §5.2
// requires the vote and the epoch to be durable before the node answers a
// vote or acts in the epoch, or a restart could let it vote twice in one
// epoch or go back to an older one.
type electionState struct {
	Epoch    int32 `json:"leaderEpoch"`
	LeaderID int32 `json:"leaderId"` // noNode when unknown
	VotedFor int32 `json:"votedId"`  // noNode when it voted for no one
}

// noNode stands for "no node": no leader known, no vote cast.
const noNode int32 = -1

const (
	stateFileName   = "quorum-state"
	temporarySuffix = ".tmp"
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// encode writes the state as KRaft does, one JSON object, followed by a
// CRC-32C line so that a read corrupted on its way from the disk is told
// apart and read again:
//
//	{"leaderEpoch":5,"leaderId":2,"votedId":-1}
//	crc32c 1a2b3c4d
//
// The JSON is json.Marshal's form of electionState, written directly: the
// state is saved at every step of every election, and reflection was most
// of the cost (a test checks the two agree).
func (s electionState) encode() []byte {
	b := make([]byte, 0, stateEncodedBytesMax)
	b = append(b, `{"leaderEpoch":`...)
	b = strconv.AppendInt(b, int64(s.Epoch), 10)
	b = append(b, `,"leaderId":`...)
	b = strconv.AppendInt(b, int64(s.LeaderID), 10)
	b = append(b, `,"votedId":`...)
	b = strconv.AppendInt(b, int64(s.VotedFor), 10)
	b = append(b, "}\n"...)
	crc := crc32.Checksum(b, castagnoli)
	b = append(b, "crc32c "...)
	for shift := 28; shift >= 0; shift -= 4 { // %08x
		b = append(b, hexDigits[crc>>shift&0xf])
	}
	return append(b, '\n')
}

// stateEncodedBytesMax is the longest encoded state: the JSON with three
// 11-character numbers, and the CRC line.
const stateEncodedBytesMax = len(`{"leaderEpoch":,"leaderId":,"votedId":}`) + 3*11 + len("\ncrc32c 01234567\n")

const hexDigits = "0123456789abcdef"

// errBadData marks bytes read from a file that failed a check; such reads
// are repeated (readAttemptsMax) before the failure is believed.
var errBadData = errors.New("quorum: bytes read failed their checks")

func decodeElectionState(b []byte) (electionState, error) {
	body, crcLine, found := bytes.Cut(bytes.TrimSuffix(b, []byte("\n")), []byte("\ncrc32c "))
	if !found {
		return electionState{}, fmt.Errorf("%w: quorum-state has no CRC line", errBadData)
	}
	want, err := strconv.ParseUint(string(crcLine), 16, 32)
	body = append(body, '\n')
	if err != nil || uint32(want) != crc32.Checksum(body, castagnoli) {
		return electionState{}, fmt.Errorf("%w: quorum-state CRC mismatch", errBadData)
	}
	var s electionState
	if err := json.Unmarshal(body, &s); err != nil {
		return electionState{}, fmt.Errorf("%w: quorum-state: %v", errBadData, err)
	}
	if s.Epoch < 0 || s.LeaderID < noNode || s.VotedFor < noNode {
		return electionState{}, fmt.Errorf("%w: quorum-state holds impossible values %+v", errBadData, s)
	}
	return s, nil
}

// loadElectionState reads dir's quorum-state file; found is false when
// there is none (a new node).
func loadElectionState(fsys core.FS, dir string) (s electionState, found bool, err error) {
	s, err = readChecked(fsys, path.Join(dir, stateFileName), stateFileBytesMax, decodeElectionState)
	if errors.Is(err, fs.ErrNotExist) {
		return electionState{LeaderID: noNode, VotedFor: noNode}, false, nil
	}
	if err != nil {
		// An unreadable vote cannot be guessed: starting without it could
		// vote twice in one epoch. The operator must look.
		return electionState{}, false, fmt.Errorf("quorum: %s: %w", path.Join(dir, stateFileName), err)
	}
	return s, true, nil
}

// readChecked reads a whole file of at most maxBytes and decodes it,
// repeating the read while decode finds bad data, readAttemptsMax times.
func readChecked[T any](fsys core.FS, name string, maxBytes int64, decode func([]byte) (T, error)) (T, error) {
	var zero T
	f, size, err := core.OpenSized(fsys, name, maxBytes)
	if errors.Is(err, core.ErrTooBig) {
		// The quorum's files never outgrow their bounds: this one is damaged.
		return zero, fmt.Errorf("%w: %w", errBadData, err)
	}
	if err != nil {
		return zero, err
	}
	defer f.Close()
	buffer := make([]byte, size)
	for attempt := 1; ; attempt++ {
		n, err := f.ReadAt(buffer, 0)
		if err != nil && !(errors.Is(err, io.EOF) && n == len(buffer)) {
			return zero, err
		}
		value, err := decode(buffer)
		if err == nil || !errors.Is(err, errBadData) || attempt == readAttemptsMax {
			return value, err
		}
	}
}

// stateFile writes the election state durably: a temporary file, synced,
// renamed over quorum-state, and the directory synced. One write is in
// flight at a time; a change made meanwhile is written by the next one.
// Callers that must not act before their change is durable (answer a vote,
// send in a new epoch) wait with afterDurable.
type stateFile struct {
	world core.World
	dir   string

	// version counts the states handed to save, durable is the version
	// the file on disk holds. Invariant: durable <= version.
	version, durable uint64
	current          electionState
	writing          bool
	waiters          []stateWaiter
	closed           bool
}

type stateWaiter struct {
	version uint64
	f       func()
}

func newStateFile(w core.World, dir string, loaded electionState) *stateFile {
	return &stateFile{world: w, dir: dir, current: loaded}
}

// save makes s the state to write, and starts a write if none is in
// flight.
func (f *stateFile) save(s electionState) {
	if s == f.current {
		return
	}
	f.current = s
	f.version++
	if !f.writing {
		f.write()
	}
}

// afterDurable calls fn once every state saved so far is on disk: at once
// if it already is.
func (f *stateFile) afterDurable(fn func()) {
	if f.durable == f.version {
		fn()
		return
	}
	f.waiters = append(f.waiters, stateWaiter{version: f.version, f: fn})
}

func (f *stateFile) write() {
	f.writing = true
	version := f.version
	fsys := f.world.FS
	temporary := path.Join(f.dir, stateFileName+temporarySuffix)
	file, err := fsys.OpenFile(temporary, true)
	if err == nil {
		if err = file.Truncate(0); err == nil {
			_, err = file.WriteAt(f.current.encode(), 0)
		}
		if err != nil {
			file.Close()
			fsys.Remove(temporary)
		}
	}
	if err != nil {
		// A full disk: nothing may act on the new state until it is
		// written, so try again shortly.
		f.world.Log.Warn("quorum-state not written; retrying", "error", err)
		f.world.Clock.AfterFunc(retryBackoff, func() {
			if !f.closed {
				f.write()
			}
		})
		return
	}
	file.Sync(func(err error) {
		file.Close()
		if f.closed {
			return
		}
		if err == nil {
			err = fsys.Rename(temporary, path.Join(f.dir, stateFileName))
		}
		if err != nil {
			f.fail(err)
			return
		}
		fsys.SyncDir(f.dir, func(err error) {
			if f.closed {
				return
			}
			if err != nil {
				f.fail(err)
				return
			}
			f.written(version)
		})
	})
}

// fail halts the node: a failed sync may have dropped what it covered, and
// the node cannot promise its vote is durable.
func (f *stateFile) fail(err error) {
	f.closed = true
	f.world.Halt(fmt.Errorf("quorum: writing %s: %w", stateFileName, err))
}

func (f *stateFile) written(version uint64) {
	if version < f.durable || version > f.version {
		panic(fmt.Sprintf("quorum: state write of version %d completed with durable %d and latest %d", version, f.durable, f.version))
	}
	f.writing = false
	f.durable = version
	ready := 0
	for ready < len(f.waiters) && f.waiters[ready].version <= version {
		ready++
	}
	run := f.waiters[:ready:ready]
	f.waiters = f.waiters[ready:]
	if f.version > f.durable {
		f.write()
	}
	for _, w := range run {
		if f.closed {
			return
		}
		w.f()
	}
}

// isTemporary reports names the quorum writes and renames.
func isTemporary(name string) bool { return strings.HasSuffix(name, temporarySuffix) }
