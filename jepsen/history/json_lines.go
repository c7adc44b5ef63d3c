package history

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// lineBytesMax bounds one encoded op. The largest ops are polls, and a poll
// of 64 MiB of JSON is far beyond any fetch size a client asks for.
const lineBytesMax = 64 << 20

// Write encodes ops as JSON lines: one object per op, in order, each ending
// in a newline. Field names are lower-case; types, functions and partitions
// are written as names ("ok", "send", "orders-3").
func Write(w io.Writer, ops []Op) error {
	buffered := bufio.NewWriter(w)
	encoder := json.NewEncoder(buffered)
	encoder.SetEscapeHTML(false)
	for i := range ops {
		if err := encoder.Encode(&ops[i]); err != nil {
			return fmt.Errorf("history: encoding op %d: %w", i, err)
		}
	}
	if err := buffered.Flush(); err != nil {
		return fmt.Errorf("history: writing: %w", err)
	}
	return nil
}

// Read decodes a history written by Write. It rejects unknown fields, blank
// or over-long lines, an op whose index is not its line number (counting
// from 0) and more ops than a history may hold. It does not check the
// history's semantics; Validate does.
func Read(r io.Reader) ([]Op, error) { return readLimited(r, lineBytesMax) }

// readLimited is Read with the line bound as a parameter, so a test can
// exceed it without allocating 64 MiB.
func readLimited(r io.Reader, lineBytesLimit int) ([]Op, error) {
	scanner := bufio.NewScanner(r)
	scanner.Buffer(make([]byte, 0, min(64<<10, lineBytesLimit)), lineBytesLimit)
	var ops []Op
	for line := 1; scanner.Scan(); line++ {
		if len(ops) == historyOpsMax {
			return nil, fmt.Errorf("history: line %d: more than %d ops", line, historyOpsMax)
		}
		text := scanner.Bytes()
		if len(bytes.TrimSpace(text)) == 0 {
			return nil, fmt.Errorf("history: line %d is blank", line)
		}
		decoder := json.NewDecoder(bytes.NewReader(text))
		decoder.DisallowUnknownFields()
		var op Op
		if err := decoder.Decode(&op); err != nil {
			return nil, fmt.Errorf("history: line %d: %w", line, err)
		}
		if decoder.More() {
			return nil, fmt.Errorf("history: line %d holds more than one op", line)
		}
		if op.Index != len(ops) {
			return nil, fmt.Errorf("history: line %d holds op index %d, want %d", line, op.Index, len(ops))
		}
		ops = append(ops, op)
	}
	if err := scanner.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return nil, fmt.Errorf("history: line %d is longer than %d bytes", len(ops)+1, lineBytesLimit)
		}
		return nil, fmt.Errorf("history: reading: %w", err)
	}
	return ops, nil
}
