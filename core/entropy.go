package core

import (
	"math/bits"
	"time"
)

// Entropy is the only source of randomness core may use. The simulator
// derives it from the run's seed; production seeds it from the OS.
type Entropy interface {
	Uint64() uint64
}

// RandomIntn returns a number in [0, n). It panics if n <= 0, as
// math/rand's Intn does, because a caller passing that has a bug.
func RandomIntn(e Entropy, n int) int {
	if n <= 0 {
		panic("core: RandomIntn with n <= 0")
	}
	// Lemire's multiply-shift, with rejection to stay unbiased.
	bound := uint64(n)
	threshold := -bound % bound
	for {
		high, low := bits.Mul64(e.Uint64(), bound)
		if low >= threshold {
			return int(high)
		}
	}
}

// RandomDuration returns a duration in [low, high]. It is how election and
// session timeouts get their spread.
func RandomDuration(e Entropy, low, high time.Duration) time.Duration {
	if high <= low {
		return low
	}
	return low + time.Duration(RandomIntn(e, int(high-low)+1))
}

// RandomChance reports true with the given probability in [0, 1].
func RandomChance(e Entropy, probability float64) bool {
	if probability <= 0 {
		return false
	}
	if probability >= 1 {
		return true
	}
	return float64(e.Uint64()>>11)/(1<<53) < probability
}
