// Package batch reads and stamps Kafka RecordBatch v2 headers in place.
//
// The broker treats a produced batch as opaque bytes: it validates the header
// and CRC once, stamps the base offset and leader epoch (neither is covered
// by the CRC, so stamping never recomputes it), stores the bytes, and serves
// them as they are. This package is that header knowledge and nothing more;
// decoding individual records is left to kmsg where a feature needs it
// (compaction, for one).
//
// Start with Header and Parse (header.go), then Scanner (scan.go), which
// walks a buffer of back-to-back batches as stored in a segment;
// compacted.go holds what log compaction needs: splitting records out of a
// batch, rebuilding a batch with fewer of them, and the relaxed validation
// of such batches (ValidateCompacted), which produced batches never get.
package batch
