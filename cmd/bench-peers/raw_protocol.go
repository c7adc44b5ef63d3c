package main

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// The raw baseline's wire protocol, as small as moving records durably
// over TCP can be. A connection opens with a header:
//
//	mode (1 byte: 'P' produce or 'C' consume), from-end (1 byte: 0 or 1),
//	name length (2 bytes, big-endian), name (the log file)
//
// A producer then sends frames, each a 4-byte big-endian length and that
// many bytes; the server answers with 8-byte big-endian counts of this
// connection's records that are now durable, cumulative. A consumer
// receives the log's frames, exactly as stored, from the start (or the
// end at connect time) as they become durable, until it hangs up.
const (
	rawModeProduce = 'P'
	rawModeConsume = 'C'
	// rawNameBytesMax bounds a log's name.
	rawNameBytesMax = 255
	// rawFrameHeaderBytes is a frame's length prefix.
	rawFrameHeaderBytes = 4
	// rawAckBytes is one acknowledgement.
	rawAckBytes = 8
	// rawRecordBytesMax bounds one frame's payload, as Kafka's
	// message.max.bytes bounds a record.
	rawRecordBytesMax = 1 << 20
	// rawBufferBytes sizes socket read buffers: a few hundred records.
	rawBufferBytes = 1 << 20
)

type rawHeader struct {
	mode    byte
	fromEnd bool
	name    string
}

func writeRawHeader(w io.Writer, h rawHeader) error {
	if len(h.name) == 0 || len(h.name) > rawNameBytesMax {
		return fmt.Errorf("log name %q: want 1 to %d bytes", h.name, rawNameBytesMax)
	}
	buffer := []byte{h.mode, 0, 0, 0}
	if h.fromEnd {
		buffer[1] = 1
	}
	binary.BigEndian.PutUint16(buffer[2:], uint16(len(h.name)))
	_, err := w.Write(append(buffer, h.name...))
	return err
}

func readRawHeader(r io.Reader) (rawHeader, error) {
	var fixed [4]byte
	if _, err := io.ReadFull(r, fixed[:]); err != nil {
		return rawHeader{}, err
	}
	length := int(binary.BigEndian.Uint16(fixed[2:]))
	if (fixed[0] != rawModeProduce && fixed[0] != rawModeConsume) || fixed[1] > 1 || length == 0 || length > rawNameBytesMax {
		return rawHeader{}, errors.New("bad connection header")
	}
	name := make([]byte, length)
	if _, err := io.ReadFull(r, name); err != nil {
		return rawHeader{}, err
	}
	for _, b := range name {
		if !(b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= '0' && b <= '9' || b == '-' || b == '_') {
			return rawHeader{}, fmt.Errorf("log name %q: letters, digits, - and _ only", name)
		}
	}
	return rawHeader{mode: fixed[0], fromEnd: fixed[1] == 1, name: string(name)}, nil
}
