package kernel

import (
	"testing"
	"time"
)

func TestBetweenStaysInItsBounds(t *testing.T) {
	rng := NewRand(1, "test/between")
	low, high := 3*time.Millisecond, 5*time.Millisecond
	sawLow, sawHigh := false, false
	for range 100_000 {
		d := Between(rng, low, high)
		if d < low || d > high {
			t.Fatalf("Between(%v, %v) drew %v", low, high, d)
		}
		sawLow, sawHigh = sawLow || d < low+time.Microsecond, sawHigh || d > high-time.Microsecond
	}
	if !sawLow || !sawHigh {
		t.Fatalf("100000 draws never came near an end: near low %v, near high %v", sawLow, sawHigh)
	}
	if d := Between(rng, high, low); d != high {
		t.Fatalf("Between with high below low drew %v, want low (%v)", d, high)
	}
}

// Every fires as a Poisson process: about one event per mean interval,
// in time order, and never again once stopped says so.
func TestEveryFiresAtItsMeanUntilStopped(t *testing.T) {
	k := NewKernel(1, nil)
	rng := NewRand(1, "test/every")
	const mean = 10 * time.Millisecond
	stopAt := int64(100 * time.Second)
	var fired []int64
	k.Every(rng, mean, "test.every", func() bool { return k.Now() >= stopAt }, func() { fired = append(fired, k.Now()) })
	for k.Step() {
	}
	// 10,000 expected; a Poisson count's deviation is 100.
	if n := len(fired); n < 9_500 || n > 10_500 {
		t.Fatalf("fired %d times in %v at a mean of %v, want about 10000", n, time.Duration(stopAt), mean)
	}
	for i := 1; i < len(fired); i++ {
		if fired[i] < fired[i-1] {
			t.Fatalf("event %d fired at %d, before the previous one at %d", i, fired[i], fired[i-1])
		}
	}
	if last := fired[len(fired)-1]; last >= stopAt {
		t.Fatalf("fired at %d, after stopped said so at %d", last, stopAt)
	}

	never := NewKernel(1, nil)
	never.Every(rng, 0, "test.never", func() bool { return false }, func() { t.Fatal("a zero mean fired") })
	if never.Step() {
		t.Fatal("a zero mean scheduled an event")
	}
}
