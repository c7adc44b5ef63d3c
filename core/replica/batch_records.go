package replica

import (
	"errors"

	"sluice/core/batch"
)

// errNoCodecs reports a compressed batch that this node has no codecs to
// look inside (World.Codecs is nil).
var errNoCodecs = errors.New("replica: compressed batch and no codecs")

// decompressedBatchBytesMax bounds how large a compressed batch may
// inflate when the broker looks inside it: a batch is at most
// max.message.bytes compressed, and no sane codec expands a real batch
// past this.
const decompressedBatchBytesMax = 256 << 20

// batchRecords splits the records of b, one whole batch with header h,
// into into[:0], decompressing them if the batch is compressed
// (uncompressedRecords).
func (p *Partition) batchRecords(into []batch.RawRecord, b []byte, h batch.Header) ([]batch.RawRecord, error) {
	section, err := p.uncompressedRecords(b, h)
	if err != nil {
		return nil, err
	}
	return batch.SplitRecordsInto(into, section, h.RecordCount)
}

// uncompressedRecords is the records section of b, one whole batch with
// header h, decompressed with World.Codecs (at most
// decompressedBatchBytesMax bytes) if the batch is compressed. Every place
// the broker looks inside batches shares it: the record checks of a
// produce, a rewrite for compression.type, and the exact answer of a
// lookup by timestamp.
func (p *Partition) uncompressedRecords(b []byte, h batch.Header) ([]byte, error) {
	section, err := batch.RecordsSection(b)
	if err != nil || h.Compression() == batch.CompressionNone {
		return section, err
	}
	if p.w.Codecs == nil {
		return nil, errNoCodecs
	}
	return p.w.Codecs.Decompress(h.Compression(), section, decompressedBatchBytesMax)
}
