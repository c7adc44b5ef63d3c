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
// into into[:0], decompressing them with World.Codecs (at most
// decompressedBatchBytesMax bytes) if the batch is compressed. The two places the broker looks
// inside batches share it: the key check of compacted topics and the
// exact answer of a lookup by timestamp.
func (p *Partition) batchRecords(into []batch.RawRecord, b []byte, h batch.Header) ([]batch.RawRecord, error) {
	section, err := batch.RecordsSection(b)
	if err != nil {
		return nil, err
	}
	if h.Compression() != batch.CompressionNone {
		if p.w.Codecs == nil {
			return nil, errNoCodecs
		}
		if section, err = p.w.Codecs.Decompress(h.Compression(), section, decompressedBatchBytesMax); err != nil {
			return nil, err
		}
	}
	return batch.SplitRecordsInto(into, section, h.RecordCount)
}
