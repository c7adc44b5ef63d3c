// Package codecs implements core.Codecs, the compression seam core uses to
// look inside compressed record batches (log compaction), with the codecs
// Kafka's clients use: gzip and zstd from github.com/klauspost/compress,
// snappy with the xerial framing the Java producer writes (raw snappy is
// read too), and the LZ4 frame format from github.com/pierrec/lz4/v4.
//
// Both the production node and the simulator use it, so it must stay a
// pure function of its inputs: no goroutines (every encoder and decoder
// runs with concurrency 1), no randomness, output that depends only on the
// input. Decompression is bounded by the caller's sizeMax before anything
// that large is allocated, where the format lets the size be known first.
//
// Start reading with Codecs (codecs.go); snappy's framing is in snappy.go.
package codecs
