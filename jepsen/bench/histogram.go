package bench

import (
	"fmt"
	"math"
	"math/bits"
)

// The histogram's layout. Values below exactValuesMax get a bucket each;
// above it, every power-of-two range [2^k, 2^(k+1)) is cut into
// subBucketsPerOctave equal buckets, so a bucket is never wider than
// 1/subBucketsPerOctave of the values it holds: the relative error of any
// reported value is below RelativeErrorMax (about 0.8%, a little better
// than two significant digits). This is HdrHistogram's log-linear layout
// with its sub-bucket count fixed at 128.
const (
	// subBucketBits is log2(subBucketsPerOctave).
	subBucketBits = 7
	// subBucketsPerOctave is how many buckets split one power of two.
	subBucketsPerOctave = 1 << subBucketBits
	// exactValuesMax is the first value that shares its bucket with
	// another: 0..255 are counted exactly.
	exactValuesMax = 2 * subBucketsPerOctave
	// octaveBitsMax: values of up to this many bits are tracked.
	octaveBitsMax = 40
	// ValueMax is the largest value tracked (2^40-1 nanoseconds, about
	// 18 minutes). A larger value is counted in the last bucket and in
	// OutOfRange; Max still reports it exactly.
	ValueMax = 1<<octaveBitsMax - 1
	// bucketCount is the fixed size of every histogram: the exact values,
	// then subBucketsPerOctave buckets for each octave from 2^8 to 2^39.
	bucketCount = exactValuesMax + (octaveBitsMax-subBucketBits-1)*subBucketsPerOctave
)

// RelativeErrorMax bounds how far above the true value a reported
// percentile may be: reported <= true * (1 + RelativeErrorMax). A reported
// percentile is never below the true one.
const RelativeErrorMax = 1.0 / subBucketsPerOctave

// Histogram counts non-negative integer values (latencies in nanoseconds)
// in fixed memory with bounded relative error. The zero value is an empty
// histogram ready to use. It is not safe for concurrent use: wrap it (see
// Recorder) or keep one per goroutine and Merge them.
type Histogram struct {
	counts [bucketCount]uint64
	// count is the sum of counts.
	count uint64
	// minimum and maximum are exact, not bucketed. Meaningful only when
	// count > 0.
	minimum, maximum int64
	// sum is for Mean; float64 so that it cannot overflow.
	sum float64
	// outOfRange counts values below 0 or above ValueMax, which were
	// clamped into the first or last bucket.
	outOfRange uint64
}

// bucketIndex is the bucket holding value, which must be in [0, ValueMax].
func bucketIndex(value int64) int {
	if value < 0 || value > ValueMax {
		panic(fmt.Sprintf("bench: bucketIndex(%d) outside [0, %d]", value, int64(ValueMax)))
	}
	if value < exactValuesMax {
		return int(value)
	}
	// k is the position of the highest set bit: value is in [2^k, 2^(k+1)).
	k := bits.Len64(uint64(value)) - 1
	shift := k - subBucketBits
	subBucket := int(value>>shift) - subBucketsPerOctave // in [0, subBucketsPerOctave)
	return exactValuesMax + (k-subBucketBits-1)*subBucketsPerOctave + subBucket
}

// bucketHighest is the largest value that lands in bucket index: what a
// percentile falling in that bucket reports, so that a reported
// percentile is never below the true one.
func bucketHighest(index int) int64 {
	if index < 0 || index >= bucketCount {
		panic(fmt.Sprintf("bench: bucket %d outside [0, %d)", index, bucketCount))
	}
	if index < exactValuesMax {
		return int64(index)
	}
	octave := (index - exactValuesMax) / subBucketsPerOctave
	subBucket := (index - exactValuesMax) % subBucketsPerOctave
	k := octave + subBucketBits + 1
	shift := k - subBucketBits
	lowest := int64(subBucketsPerOctave+subBucket) << shift
	return lowest + 1<<shift - 1
}

// Record counts one value. A negative value counts as 0 and one above
// ValueMax as ValueMax (both also in OutOfRange), so a clock oddity is
// visible in the report rather than a crash or a silently lost sample.
func (h *Histogram) Record(value int64) {
	if h.count == 0 || value < h.minimum {
		h.minimum = value
	}
	if h.count == 0 || value > h.maximum {
		h.maximum = value
	}
	clamped := value
	if value < 0 {
		clamped = 0
		h.outOfRange++
	} else if value > ValueMax {
		clamped = ValueMax
		h.outOfRange++
	}
	h.counts[bucketIndex(clamped)]++
	h.count++
	h.sum += float64(value)
}

// Merge adds every value other counted, as if each had been recorded
// here. Every histogram has the same layout, so any two merge exactly.
func (h *Histogram) Merge(other *Histogram) {
	if other.count == 0 {
		return
	}
	if h.count == 0 || other.minimum < h.minimum {
		h.minimum = other.minimum
	}
	if h.count == 0 || other.maximum > h.maximum {
		h.maximum = other.maximum
	}
	for i, c := range other.counts {
		h.counts[i] += c
	}
	h.count += other.count
	h.sum += other.sum
	h.outOfRange += other.outOfRange
}

// Reset empties the histogram.
func (h *Histogram) Reset() { *h = Histogram{} }

// Count is how many values were recorded.
func (h *Histogram) Count() uint64 { return h.count }

// OutOfRange is how many recorded values were below 0 or above ValueMax.
func (h *Histogram) OutOfRange() uint64 { return h.outOfRange }

// Min is the smallest value recorded, exactly; 0 when empty.
func (h *Histogram) Min() int64 {
	if h.count == 0 {
		return 0
	}
	return h.minimum
}

// Max is the largest value recorded, exactly; 0 when empty.
func (h *Histogram) Max() int64 {
	if h.count == 0 {
		return 0
	}
	return h.maximum
}

// Mean is the arithmetic mean of the values recorded, exactly up to
// float64 rounding; 0 when empty.
func (h *Histogram) Mean() float64 {
	if h.count == 0 {
		return 0
	}
	return h.sum / float64(h.count)
}

// ValueAtQuantile is the value below or at which a fraction q of the
// recorded values lie: with the values sorted, the one at rank
// ceil(q*count) (at least 1), reported as the highest value of its bucket
// and never above Max. So for the true value v at that rank,
// v <= reported <= v*(1+RelativeErrorMax). q outside [0, 1] is clamped;
// q = 0 gives Min and q = 1 gives Max. An empty histogram gives 0.
func (h *Histogram) ValueAtQuantile(q float64) int64 {
	if h.count == 0 {
		return 0
	}
	if math.IsNaN(q) || q <= 0 {
		return h.Min()
	}
	if q >= 1 {
		return h.Max()
	}
	rank := uint64(math.Ceil(q * float64(h.count)))
	if rank < 1 {
		rank = 1
	}
	if rank > h.count {
		rank = h.count
	}
	var seen uint64
	for i, c := range h.counts {
		seen += c
		if seen >= rank {
			return min(bucketHighest(i), h.Max())
		}
	}
	panic(fmt.Sprintf("bench: histogram counts sum to %d, below its count %d", seen, h.count))
}
