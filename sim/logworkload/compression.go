package logworkload

import (
	"math/rand/v2"

	"sluice/core"
	"sluice/core/batch"
	"sluice/sim/kernel"
)

// Compression seeds. One seed in compressionSeedsShare appends a share of
// its batches compressed, each with one of Kafka's four codecs, as
// producers do: the log stores them as they are, and compaction must
// decompress, filter and compress again the ones it cleans (with
// World.Codecs), where a slip would only show inside the records. The
// model reads them the same way (rawRecords). Like the compaction
// settings, these come from their own PRNG stream, and a seed that does
// not compress draws nothing more from the run's: such seeds run as they
// did before compression existed.

// compressionSettings is what a seed decides about compression.
type compressionSettings struct {
	// chance is the chance that a batch is compressed; 0 for none.
	chance float64
}

const (
	compressionSeedsShare     = 3
	compressionChanceDrawMin  = 0.2
	compressionSettingsStream = "compression-settings"
)

// codecsAll are Kafka's codecs (a batch's attributes' low bits).
var codecsAll = [...]int{batch.CompressionGzip, batch.CompressionSnappy, batch.CompressionLZ4, batch.CompressionZstd}

func drawCompressionSettings(seed uint64) compressionSettings {
	rng := kernel.NewRand(seed, compressionSettingsStream)
	if rng.IntN(compressionSeedsShare) != 0 {
		return compressionSettings{}
	}
	return compressionSettings{chance: compressionChanceDrawMin + rng.Float64()*(1-compressionChanceDrawMin)}
}

// maybeCompress returns b, one uncompressed batch, compressed with a
// random codec at the seed's chance.
func (s compressionSettings) maybeCompress(rng *rand.Rand, codecs core.Codecs, b []byte) []byte {
	if s.chance == 0 || rng.Float64() >= s.chance {
		return b
	}
	compressed, err := batch.Compress(b, codecsAll[rng.IntN(len(codecsAll))], codecs.Compress)
	if err != nil {
		panic("logworkload: compressing a batch it built: " + err.Error())
	}
	return compressed
}
