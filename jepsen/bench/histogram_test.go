package bench

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

// exactQuantile is the definition ValueAtQuantile approximates: the value
// at rank ceil(q*n) of the sorted values.
func exactQuantile(sorted []int64, q float64) int64 {
	rank := int(math.Ceil(q * float64(len(sorted))))
	rank = max(1, min(rank, len(sorted)))
	return sorted[rank-1]
}

// checkQuantiles asserts the histogram's stated precision against exact
// percentiles of values: true <= reported <= true*(1+RelativeErrorMax).
func checkQuantiles(t *testing.T, name string, values []int64) {
	t.Helper()
	var h Histogram
	for _, v := range values {
		h.Record(v)
	}
	sorted := slices.Clone(values)
	slices.Sort(sorted)
	if h.Count() != uint64(len(values)) {
		t.Fatalf("%s: count %d, want %d", name, h.Count(), len(values))
	}
	if h.Min() != sorted[0] || h.Max() != sorted[len(sorted)-1] {
		t.Fatalf("%s: min %d max %d, want exactly %d and %d", name, h.Min(), h.Max(), sorted[0], sorted[len(sorted)-1])
	}
	for _, q := range []float64{0.0001, 0.01, 0.1, 0.25, 0.5, 0.75, 0.9, 0.99, 0.999, 0.9999, 1} {
		want := exactQuantile(sorted, q)
		got := h.ValueAtQuantile(q)
		upper := want + int64(float64(want)*RelativeErrorMax)
		if got < want || got > upper {
			t.Errorf("%s: quantile %v = %d, want within [%d, %d] (exact %d, relative error max %.4f)", name, q, got, want, upper, want, RelativeErrorMax)
		}
	}
}

func TestHistogramQuantilesWithinStatedPrecision(t *testing.T) {
	random := rand.New(rand.NewPCG(1, 2))
	distributions := map[string]func() int64{
		// Small values are counted exactly.
		"uniform below 256": func() int64 { return random.Int64N(256) },
		// Latency-like: microseconds to seconds, log-uniform.
		"log-uniform 1µs..10s": func() int64 { return int64(math.Exp(math.Log(1e3) + random.Float64()*(math.Log(1e10)-math.Log(1e3)))) },
		// A long tail: exponential with mean 2ms plus rare 1s stalls.
		"exponential with stalls": func() int64 {
			if random.IntN(1000) == 0 {
				return 1e9 + random.Int64N(1e8)
			}
			return int64(random.ExpFloat64() * 2e6)
		},
		"uniform full range": func() int64 { return random.Int64N(ValueMax + 1) },
	}
	names := make([]string, 0, len(distributions))
	for name := range distributions {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		for _, n := range []int{1, 2, 7, 1000, 100_000} {
			values := make([]int64, n)
			for i := range values {
				values[i] = distributions[name]()
			}
			checkQuantiles(t, name, values)
		}
	}
}

func TestHistogramBucketBoundaries(t *testing.T) {
	// Every bucket's highest value maps back to the bucket, the value
	// after it to the next one, and the width stays within the stated
	// relative error.
	for index := range bucketCount {
		highest := bucketHighest(index)
		if got := bucketIndex(highest); got != index {
			t.Fatalf("bucketIndex(bucketHighest(%d) = %d) = %d", index, highest, got)
		}
		if index+1 < bucketCount {
			if got := bucketIndex(highest + 1); got != index+1 {
				t.Fatalf("bucketIndex(%d) = %d, want %d", highest+1, got, index+1)
			}
		}
		lowest := int64(0)
		if index > 0 {
			lowest = bucketHighest(index-1) + 1
		}
		if lowest > 0 && float64(highest-lowest) > float64(lowest)*RelativeErrorMax {
			t.Fatalf("bucket %d spans [%d, %d]: wider than %.4f of its lowest value", index, lowest, highest, RelativeErrorMax)
		}
	}
	if got := bucketHighest(bucketCount - 1); got != ValueMax {
		t.Fatalf("the last bucket ends at %d, want ValueMax %d", got, int64(ValueMax))
	}
}

func TestHistogramMergeEqualsRecordingEverything(t *testing.T) {
	random := rand.New(rand.NewPCG(3, 4))
	var whole, left, right Histogram
	for i := range 50_000 {
		v := random.Int64N(1e9)
		whole.Record(v)
		if i%3 == 0 {
			left.Record(v)
		} else {
			right.Record(v)
		}
	}
	var merged Histogram
	merged.Merge(&left)
	merged.Merge(&right)
	merged.Merge(&Histogram{}) // an empty histogram changes nothing
	if merged != whole {
		t.Fatalf("merged histogram differs from recording everything in one: count %d vs %d, min %d vs %d, max %d vs %d",
			merged.Count(), whole.Count(), merged.Min(), whole.Min(), merged.Max(), whole.Max())
	}
}

func TestHistogramOutOfRangeIsClampedAndCounted(t *testing.T) {
	var h Histogram
	h.Record(-5)
	h.Record(ValueMax + 1000)
	h.Record(100)
	if h.Count() != 3 || h.OutOfRange() != 2 {
		t.Fatalf("count %d out of range %d, want 3 and 2", h.Count(), h.OutOfRange())
	}
	if h.Min() != -5 || h.Max() != ValueMax+1000 {
		t.Fatalf("min %d max %d: want the exact values -5 and %d", h.Min(), h.Max(), int64(ValueMax+1000))
	}
	if got := h.ValueAtQuantile(0.5); got != 100 {
		t.Fatalf("median %d, want 100", got)
	}
}

func TestHistogramEmptyAndEdgeQuantiles(t *testing.T) {
	var h Histogram
	if h.ValueAtQuantile(0.5) != 0 || h.Min() != 0 || h.Max() != 0 || h.Mean() != 0 {
		t.Fatal("an empty histogram reports zeros")
	}
	for _, v := range []int64{1000, 2000, 3000} {
		h.Record(v)
	}
	if h.ValueAtQuantile(0) != 1000 || h.ValueAtQuantile(-1) != 1000 || h.ValueAtQuantile(math.NaN()) != 1000 {
		t.Fatal("quantile 0 and below give the minimum")
	}
	if h.ValueAtQuantile(1) != 3000 || h.ValueAtQuantile(2) != 3000 {
		t.Fatal("quantile 1 and above give the maximum")
	}
	if h.Mean() != 2000 {
		t.Fatalf("mean %v, want 2000", h.Mean())
	}
	h.Reset()
	if h.Count() != 0 {
		t.Fatal("Reset leaves values behind")
	}
}

func TestSummaryPercentilesAreOrdered(t *testing.T) {
	var r Recorder
	random := rand.New(rand.NewPCG(5, 6))
	for range 10_000 {
		r.Record(time.Duration(random.Int64N(5e7)))
	}
	s := r.Summary()
	if !(s.Min <= s.P50 && s.P50 <= s.P90 && s.P90 <= s.P99 && s.P99 <= s.P999 && s.P999 <= s.Max) {
		t.Fatalf("percentiles out of order: %+v", s)
	}
	if s.Count != 10_000 {
		t.Fatalf("count %d, want 10000", s.Count)
	}
}
