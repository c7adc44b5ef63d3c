package log

import (
	"bytes"
	"errors"
	"fmt"
	"hash/crc32"
	"io/fs"
	"path"
	"strconv"
	"strings"

	"sluice/core"
)

// checkpoint is what the log remembers across restarts besides its
// segments, in the one file log.checkpoint:
//
//	sluice-log-checkpoint 2
//	start-offset 120
//	recovery-point 4000
//	cleaner-offset 2500
//	epochs 2
//	3 120
//	5 3100
//	crc32c 1a2b3c4d
//
// The start offset is the log start; segments below it are removed only once a
// checkpoint recording it is durable (see retention.go). The recovery point
// says which segments recovery may trust without scanning: those ending
// strictly below it (see checkpoint_trust.go and open.go). The cleaner offset
// is Kafka's cleaner checkpoint: compaction has finished with every record
// below it (see compaction.go), and it is written only once the rewritten
// segments are durable. The epoch entries are the leader epoch cache for the
// trusted segments, whose batch headers recovery does not read. Kafka keeps
// these in separate files; here they share one, written atomically (temporary
// file, Sync, Rename, SyncDir), so a crash can never pair a recovery point with
// epoch entries from another moment. The CRC-32C line lets a read corrupted in
// flight be told apart and re-read.
//
// Version 1 files, written before compaction existed, have no cleaner
// offset line and read as cleaner offset 0.
type checkpoint struct {
	startOffset   int64
	recoveryPoint int64
	cleanerOffset int64
	epochs        []EpochEntry
}

const (
	checkpointMagic   = "sluice-log-checkpoint 2"
	checkpointMagicV1 = "sluice-log-checkpoint 1"
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// encode writes the checkpoint in the format above. It appends with
// strconv into one buffer sized for it, rather than formatting with fmt:
// every sync round that moves the log writes one.
func (c checkpoint) encode() []byte {
	// The fixed lines, then at most 20 digits and a sign per number.
	return c.appendTo(make([]byte, 0, len(checkpointMagic)+80+4*21+len(c.epochs)*(2*21+2)+len("crc32c 01234567\n")))
}

// appendTo is encode appending to b, for a log that writes every
// checkpoint from one buffer it reuses (see Log.scratchForWrite).
func (c checkpoint) appendTo(b []byte) []byte {
	start := len(b)
	b = append(b, checkpointMagic...)
	b = appendField(b, "start-offset", c.startOffset)
	b = appendField(b, "recovery-point", c.recoveryPoint)
	b = appendField(b, "cleaner-offset", c.cleanerOffset)
	b = appendField(b, "epochs", int64(len(c.epochs)))
	b = append(b, '\n')
	for _, e := range c.epochs {
		b = strconv.AppendInt(b, int64(e.Epoch), 10)
		b = append(b, ' ')
		b = strconv.AppendInt(b, e.StartOffset, 10)
		b = append(b, '\n')
	}
	crc := crc32.Checksum(b[start:], castagnoli)
	b = append(b, "crc32c "...)
	b = appendCRCText(b, crc)
	return append(b, '\n')
}

// appendField ends the line before and appends "name value".
func appendField(b []byte, name string, value int64) []byte {
	b = append(b, '\n')
	b = append(b, name...)
	b = append(b, ' ')
	return strconv.AppendInt(b, value, 10)
}

// appendCRCText appends crc as fmt's %08x would: eight lowercase hex
// digits.
func appendCRCText(b []byte, crc uint32) []byte {
	const digits = "0123456789abcdef"
	for shift := 28; shift >= 0; shift -= 4 {
		b = append(b, digits[crc>>shift&0xf])
	}
	return b
}

// decodeCheckpoint parses and checks a checkpoint file. Any deviation is
// errBadData: the caller re-reads, and if it persists, recovers without a
// checkpoint (scanning everything).
func decodeCheckpoint(b []byte) (checkpoint, error) {
	var c checkpoint
	bad := func(format string, args ...any) (checkpoint, error) {
		return checkpoint{}, fmt.Errorf("%w: checkpoint: %s", errBadData, fmt.Sprintf(format, args...))
	}
	body, crcLine, found := cutLastLine(b)
	if !found {
		return bad("no CRC line")
	}
	crcText, found := strings.CutPrefix(crcLine, "crc32c ")
	if !found {
		return bad("no CRC line")
	}
	var crcWant [8]byte
	if crcText != string(appendCRCText(crcWant[:0], crc32.Checksum(body, castagnoli))) {
		return bad("CRC mismatch")
	}
	var err error
	lines := strings.Split(strings.TrimSuffix(string(body), "\n"), "\n")
	if len(lines) < 4 || (lines[0] != checkpointMagic && lines[0] != checkpointMagicV1) {
		return bad("unknown format")
	}
	if c.startOffset, err = parseField(lines[1], "start-offset"); err != nil {
		return bad("%v", err)
	}
	if c.recoveryPoint, err = parseField(lines[2], "recovery-point"); err != nil {
		return bad("%v", err)
	}
	next := 3
	if lines[0] == checkpointMagic {
		if len(lines) < 5 {
			return bad("unknown format")
		}
		if c.cleanerOffset, err = parseField(lines[3], "cleaner-offset"); err != nil {
			return bad("%v", err)
		}
		next = 4
	}
	count, err := parseField(lines[next], "epochs")
	if err != nil || count > epochEntriesMax || int(count) != len(lines)-next-1 {
		return bad("epoch count %q does not match its lines", lines[next])
	}
	for i, line := range lines[next+1:] {
		epochText, startText, found := strings.Cut(line, " ")
		epoch, err1 := strconv.ParseInt(epochText, 10, 32)
		start, err2 := strconv.ParseInt(startText, 10, 64)
		if !found || err1 != nil || err2 != nil || epoch < 0 || start < 0 {
			return bad("epoch line %d %q", i, line)
		}
		e := EpochEntry{Epoch: int32(epoch), StartOffset: start}
		if i > 0 && (e.Epoch <= c.epochs[i-1].Epoch || e.StartOffset <= c.epochs[i-1].StartOffset) {
			return bad("epoch line %d does not increase", i)
		}
		c.epochs = append(c.epochs, e)
	}
	return c, nil
}

func parseField(line, name string) (int64, error) {
	text, found := strings.CutPrefix(line, name+" ")
	if !found {
		return 0, fmt.Errorf("expected %q, found %q", name, line)
	}
	v, err := strconv.ParseInt(text, 10, 64)
	if err != nil || v < 0 {
		return 0, fmt.Errorf("bad %s %q", name, text)
	}
	return v, nil
}

// cutLastLine splits b, which must end in a newline, before its last line.
func cutLastLine(b []byte) (body []byte, last string, found bool) {
	if len(b) == 0 || b[len(b)-1] != '\n' {
		return nil, "", false
	}
	i := bytes.LastIndexByte(b[:len(b)-1], '\n')
	if i < 0 {
		return nil, "", false
	}
	return b[:i+1], string(b[i+1 : len(b)-1]), true
}

// CheckpointedStart is the log start offset recorded in a log directory's
// checkpoint file as the disk holds it now, 0 when there is none: where
// the log in dir starts for a reader of its files, who sees segments from
// their first batch, which may lie below the start (segments go only once
// a checkpoint past them is durable). For tools that look at a node's
// disk, as the simulator's replica checks do.
func CheckpointedStart(fsys core.FS, dir string) (int64, error) {
	c, err := readChecked(fsys, path.Join(dir, checkpointName), checkpointBytesMax, decodeCheckpoint)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	return c.startOffset, nil
}
