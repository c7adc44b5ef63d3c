package codecs

import (
	"bytes"
	"errors"
	"fmt"
	"io"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"

	"sluice/core"
	"sluice/core/batch"
)

// ErrTooLarge reports output beyond the caller's sizeMax.
var ErrTooLarge = errors.New("codecs: decompressed records exceed the bound")

// ErrUnknownCodec reports a codec number Kafka does not define.
var ErrUnknownCodec = errors.New("codecs: unknown compression codec")

// Codecs is core.Codecs for Kafka's four codecs. The zero value is not
// usable; call New. It holds one zstd encoder, reused for every call.
type Codecs struct {
	zstdEncoder *zstd.Encoder
}

var _ core.Codecs = (*Codecs)(nil)

// New returns the codecs.
func New() *Codecs {
	encoder, err := zstd.NewWriter(nil, zstd.WithEncoderConcurrency(1), zstd.WithZeroFrames(true))
	if err != nil {
		panic(fmt.Sprintf("codecs: zstd encoder: %v", err)) // only bad options fail
	}
	return &Codecs{zstdEncoder: encoder}
}

// Decompress implements core.Codecs.
func (c *Codecs) Decompress(codec int, src []byte, sizeMax int) ([]byte, error) {
	switch codec {
	case batch.CompressionGzip:
		r, err := gzip.NewReader(bytes.NewReader(src))
		if err != nil {
			return nil, err
		}
		return readBounded(r, sizeMax)
	case batch.CompressionSnappy:
		return decompressSnappy(src, sizeMax)
	case batch.CompressionLZ4:
		return readBounded(lz4.NewReader(bytes.NewReader(src)), sizeMax)
	case batch.CompressionZstd:
		// The decoder refuses a frame claiming, or growing, beyond the
		// bound before allocating it.
		decoder, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxMemory(uint64(max(sizeMax, 1))))
		if err != nil {
			return nil, err
		}
		defer decoder.Close()
		out, err := decoder.DecodeAll(src, nil)
		if errors.Is(err, zstd.ErrDecoderSizeExceeded) || len(out) > sizeMax {
			return nil, ErrTooLarge
		}
		return out, err
	}
	return nil, fmt.Errorf("%w: %d", ErrUnknownCodec, codec)
}

// Compress implements core.Codecs.
func (c *Codecs) Compress(codec int, dst, src []byte) ([]byte, error) {
	switch codec {
	case batch.CompressionGzip:
		b := bytes.NewBuffer(dst)
		w := gzip.NewWriter(b)
		if _, err := w.Write(src); err != nil {
			return nil, err
		}
		if err := w.Close(); err != nil {
			return nil, err
		}
		return b.Bytes(), nil
	case batch.CompressionSnappy:
		return compressSnappy(dst, src), nil
	case batch.CompressionLZ4:
		b := bytes.NewBuffer(dst)
		w := lz4.NewWriter(b)
		if _, err := w.Write(src); err != nil {
			return nil, err
		}
		if err := w.Close(); err != nil {
			return nil, err
		}
		return b.Bytes(), nil
	case batch.CompressionZstd:
		return c.zstdEncoder.EncodeAll(src, dst), nil
	}
	return nil, fmt.Errorf("%w: %d", ErrUnknownCodec, codec)
}

// readBounded reads r to its end, failing once it passes sizeMax bytes.
func readBounded(r io.Reader, sizeMax int) ([]byte, error) {
	out, err := io.ReadAll(io.LimitReader(r, int64(sizeMax)+1))
	if err != nil {
		return nil, err
	}
	if len(out) > sizeMax {
		return nil, ErrTooLarge
	}
	return out, nil
}
