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
// usable; call New. It holds one encoder per codec that has state, reset
// and reused for every call: a gzip writer allocates about a megabyte of
// tables when made, which a compression seed of the simulator's log
// workload paid for every batch (it halved the workload's seeds per
// second). One Codecs is used by one goroutine (a node's loop, a
// simulated machine).
type Codecs struct {
	zstdEncoder *zstd.Encoder
	gzipWriter  *gzip.Writer
	lz4Writer   *lz4.Writer
	// gzipReader and lz4Reader are made at first use and reset for each
	// batch.
	gzipReader *gzip.Reader
	lz4Reader  *lz4.Reader
	// zstdDecoder is made for a bound, zstdDecoderBound, and kept while
	// calls ask the same bound (callers each pass one constant).
	zstdDecoder      *zstd.Decoder
	zstdDecoderBound int
}

var _ core.Codecs = (*Codecs)(nil)

// New returns the codecs.
func New() *Codecs {
	encoder, err := zstd.NewWriter(nil, zstd.WithEncoderConcurrency(1), zstd.WithZeroFrames(true))
	if err != nil {
		panic(fmt.Sprintf("codecs: zstd encoder: %v", err)) // only bad options fail
	}
	return &Codecs{zstdEncoder: encoder, gzipWriter: gzip.NewWriter(nil), lz4Writer: lz4.NewWriter(nil)}
}

// Decompress implements core.Codecs.
func (c *Codecs) Decompress(codec int, src []byte, sizeMax int) ([]byte, error) {
	switch codec {
	case batch.CompressionGzip:
		// A gzip reader is reset rather than made, as the writers are:
		// each new one allocated its inflater's tables, for every
		// batch a consumer or the cleaner looked inside.
		if c.gzipReader == nil {
			r, err := gzip.NewReader(bytes.NewReader(src))
			if err != nil {
				return nil, err
			}
			c.gzipReader = r
		} else if err := c.gzipReader.Reset(bytes.NewReader(src)); err != nil {
			return nil, err
		}
		return readBounded(c.gzipReader, sizeMax)
	case batch.CompressionSnappy:
		return decompressSnappy(src, sizeMax)
	case batch.CompressionLZ4:
		if c.lz4Reader == nil {
			c.lz4Reader = lz4.NewReader(nil)
		}
		c.lz4Reader.Reset(bytes.NewReader(src))
		return readBounded(c.lz4Reader, sizeMax)
	case batch.CompressionZstd:
		decoder, err := c.zstdDecoderFor(sizeMax)
		if err != nil {
			return nil, err
		}
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
		w := c.gzipWriter
		w.Reset(b)
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
		w := c.lz4Writer
		w.Reset(b)
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

// zstdDecoderFor returns a decoder that refuses a frame claiming, or
// growing, beyond sizeMax before allocating it: the one kept if it was
// made for that bound, else a new one, kept in its place.
func (c *Codecs) zstdDecoderFor(sizeMax int) (*zstd.Decoder, error) {
	if c.zstdDecoder != nil && c.zstdDecoderBound == sizeMax {
		return c.zstdDecoder, nil
	}
	decoder, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxMemory(uint64(max(sizeMax, 1))))
	if err != nil {
		return nil, err
	}
	if c.zstdDecoder != nil {
		c.zstdDecoder.Close()
	}
	c.zstdDecoder, c.zstdDecoderBound = decoder, sizeMax
	return decoder, nil
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
