package kernel

import (
	"math"
	"time"
)

// Source is what the draws below take from a stream of NewRand.
type Source interface {
	Int64N(n int64) int64
	Float64() float64
}

// Between draws a duration uniformly in [low, high]; low when high is not
// above it.
func Between(rng Source, low, high time.Duration) time.Duration {
	if high <= low {
		return low
	}
	return low + time.Duration(rng.Int64N(int64(high-low)+1))
}

// Exponential draws the gap between two events of a Poisson process of
// the given mean interval: how the simulator spaces faults and client
// arrivals, so that they bunch and thin out as real ones do.
func Exponential(rng Source, mean time.Duration) time.Duration {
	return time.Duration(-math.Log(1-rng.Float64()) * float64(mean))
}

// Every runs fire at exponentially distributed intervals of the given mean
// (gaps drawn from rng, each as the previous one fires), as events of the
// world, owned by no process, until stopped says so when one comes due. A
// zero mean never fires.
func (k *Kernel) Every(rng Source, mean time.Duration, label string, stopped func() bool, fire func()) {
	if mean <= 0 {
		return
	}
	var next func()
	next = func() {
		k.Post(int64(Exponential(rng, mean)), nil, label, Func(func() {
			if stopped() {
				return
			}
			fire()
			next()
		}))
	}
	next()
}
