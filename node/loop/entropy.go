package loop

import (
	cryptorand "crypto/rand"
	"math/rand/v2"

	"sluice/core"
)

// chaCha8SeedBytes is the seed length of math/rand/v2's ChaCha8.
const chaCha8SeedBytes = 32

// NewEntropy returns a core.Entropy seeded from the operating system: a
// ChaCha8 generator, fast and of good quality, with a seed nobody can guess
// (so two nodes started together do not draw the same election timeouts).
// Like everything core uses, it is for the loop goroutine only.
func NewEntropy() core.Entropy {
	var seed [chaCha8SeedBytes]byte
	// crypto/rand.Read never fails: since Go 1.24 it crashes the program
	// rather than return an error.
	_, _ = cryptorand.Read(seed[:])
	return rand.NewChaCha8(seed)
}
