// Package batch reads and stamps Kafka RecordBatch v2 headers in place.
//
// The broker stores a produced batch as the bytes it was sent: it validates
// the header and CRC once, walks an uncompressed batch's records once
// without copying them (CheckRecords: each parses, as many as counted,
// numbered 0, 1, 2...; a compressed batch only on compacted topics),
// stamps the base offset and leader epoch (neither is covered by the CRC,
// so stamping never recomputes it), stores the bytes, and serves them as
// they are. This package is that knowledge of the format; compression is
// not (core.Codecs supplies it), so Compress takes the codec as a
// function.
//
// Start with Header and Parse (header.go), then Scanner (scan.go), which
// walks a buffer of back-to-back batches as stored in a segment;
// records.go builds batches and decodes records; check_records.go is
// the leader's walk of a produced batch; compacted.go holds what log
// compaction needs: splitting records out of a batch, rebuilding a batch
// with fewer of them, and the relaxed validation of such batches
// (ValidateCompacted), which produced batches never get; compress.go
// compresses a whole batch and names Kafka's codecs.
package batch
