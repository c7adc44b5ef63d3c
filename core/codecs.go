package core

// Codecs compresses and decompresses the records section of Kafka record
// batches. Core may not import compression libraries (they are not part of
// the deterministic core, and some use goroutines or assembly), so the few
// features that must look inside a compressed batch, log compaction first,
// ask the World for an implementation: production and the simulator supply
// one (node/codecs); a nil Codecs means "uncompressed only", and such a
// feature then leaves compressed batches as they are.
//
// codec is the batch attribute's compression value: 1 gzip, 2 snappy,
// 3 lz4, 4 zstd (core/batch's Compression constants). Both methods must be
// deterministic functions of their arguments and must not keep src.
type Codecs interface {
	// Decompress returns the decompressed form of src. Output larger than
	// sizeMax bytes is an error, never an allocation: a batch of a few
	// kilobytes can claim gigabytes once inflated.
	Decompress(codec int, src []byte, sizeMax int) ([]byte, error)

	// Compress appends the compressed form of src to dst and returns the
	// extended slice, in the framing Kafka's clients read for that codec.
	Compress(codec int, dst, src []byte) ([]byte, error)
}
