package simclient

import (
	"fmt"

	"sluice/core"
	"sluice/core/batch"
	"sluice/node/codecs"
)

// Compression, as Kafka's clients do it: a producer with a codec
// compresses each batch's records section (ProducerConfig.Compression),
// and every consumer decompresses what it fetches. The codecs are
// production's (node/codecs), deterministic functions of their input, so
// a compressed run replays like any other.

// decompressedBytesMax bounds how large one fetched batch may inflate
// (Kafka's consumers have no such bound; a broken broker must not make the
// simulator allocate without limit).
const decompressedBytesMax = 64 << 20

// codecs returns the client's codecs: Config.Codecs, or its own, made at
// first use, since most runs never compress.
func (c *Client) codecs() core.Codecs {
	if c.codecSet == nil {
		c.codecSet = c.config.Codecs
	}
	if c.codecSet == nil {
		c.codecSet = codecs.New()
	}
	return c.codecSet
}

// compressBatch compresses one batch the producer built.
func compressBatch(codecs core.Codecs, codec int, b []byte) []byte {
	compressed, err := batch.Compress(b, codec, codecs.Compress)
	if err != nil {
		panic(fmt.Sprintf("simclient: compressing a batch it built: %v", err))
	}
	return compressed
}

// batchRecords decodes the records of one whole fetched batch,
// decompressing them first if the batch says it is compressed (only then
// does it use c, which may be nil otherwise).
func (c *Client) batchRecords(b []byte, h batch.Header) ([]batch.Record, error) {
	if h.Compression() == batch.CompressionNone {
		return batch.Records(b)
	}
	section, err := batch.RecordsSection(b)
	if err != nil {
		return nil, err
	}
	if section, err = c.codecs().Decompress(h.Compression(), section, decompressedBytesMax); err != nil {
		return nil, err
	}
	raw, err := batch.SplitRecords(section, h.RecordCount)
	if err != nil {
		return nil, err
	}
	records := make([]batch.Record, len(raw))
	for i, r := range raw {
		records[i] = r.Record
	}
	return records, nil
}
