package codecs

import (
	"bytes"
	"encoding/binary"
	"errors"

	"github.com/klauspost/compress/s2"
)

// Kafka's Java producer writes snappy through xerial's SnappyOutputStream:
// a 16-byte header (a magic prefix, then version 1 and minimum compatible
// version 1), then blocks of at most 32 KiB, each a big-endian length and a
// raw snappy block. Other clients (librdkafka, franz-go's older versions)
// write one raw snappy block. Both are read; xerial is written, since every
// client reads it.
var xerialMagic = []byte{130, 'S', 'N', 'A', 'P', 'P', 'Y', 0}

const (
	xerialHeaderBytes = 16
	xerialBlockBytes  = 32 << 10
)

var errXerialFraming = errors.New("codecs: malformed xerial snappy framing")

func compressSnappy(dst, src []byte) []byte {
	dst = append(dst, xerialMagic...)
	dst = binary.BigEndian.AppendUint32(dst, 1) // version
	dst = binary.BigEndian.AppendUint32(dst, 1) // minimum compatible version
	for len(src) > 0 {
		n := min(len(src), xerialBlockBytes)
		block := s2.EncodeSnappy(nil, src[:n])
		dst = binary.BigEndian.AppendUint32(dst, uint32(len(block)))
		dst = append(dst, block...)
		src = src[n:]
	}
	return dst
}

func decompressSnappy(src []byte, sizeMax int) ([]byte, error) {
	if len(src) < xerialHeaderBytes || !bytes.HasPrefix(src, xerialMagic) {
		return decodeSnappyBlock(nil, src, sizeMax)
	}
	var out []byte
	for rest := src[xerialHeaderBytes:]; len(rest) > 0; {
		if len(rest) < 4 {
			return nil, errXerialFraming
		}
		size := binary.BigEndian.Uint32(rest)
		rest = rest[4:]
		if uint64(size) > uint64(len(rest)) {
			return nil, errXerialFraming
		}
		var err error
		if out, err = decodeSnappyBlock(out, rest[:size], sizeMax); err != nil {
			return nil, err
		}
		rest = rest[size:]
	}
	return out, nil
}

// decodeSnappyBlock appends one raw snappy block to dst, checking the
// length it claims against sizeMax before allocating it.
func decodeSnappyBlock(dst, block []byte, sizeMax int) ([]byte, error) {
	length, err := s2.DecodedLen(block)
	if err != nil {
		return nil, err
	}
	if length > sizeMax-len(dst) {
		return nil, ErrTooLarge
	}
	decoded, err := s2.Decode(nil, block)
	if err != nil {
		return nil, err
	}
	return append(dst, decoded...), nil
}
