package checker

import (
	"math/rand/v2"
	"testing"

	"sluice/jepsen/history"
)

// benchmarkSteps makes correctHistory produce about 10,000 ops over four
// partitions.
const benchmarkSteps = 28_000

func benchmarkHistory(b *testing.B) []history.Op {
	random := rand.New(rand.NewPCG(1, 2))
	ops := correctHistory(random.IntN, 4, benchmarkSteps, true)
	if report := Check(ops, Options{FinalDrain: true}); !report.Valid {
		b.Fatalf("benchmark history is not valid:\n%s", report)
	}
	return ops
}

// BenchmarkCheck times checking a correct ~10k-op history: everything,
// everything but porcupine, and validation alone (the floor every check
// pays). Compare them as ratios; ns/history-op is the cost per op.
func BenchmarkCheck(b *testing.B) {
	ops := benchmarkHistory(b)
	withoutDrain := ops[:len(ops)-4] // the drain is two polls
	cheap := []checker{lostWriteChecker, duplicateChecker, inconsistentOffsetsChecker, nonmonotonicSendChecker,
		pollOrderChecker, internalPollOrderChecker, abortedReadChecker, groupOwnershipChecker}
	for _, bench := range []struct {
		name    string
		judged  []history.Op
		options Options
		run     func(ops []history.Op, options Options) bool
	}{
		{"all", ops, Options{FinalDrain: true}, func(ops []history.Op, options Options) bool {
			return Check(ops, options).Valid
		}},
		{"all-without-drain", withoutDrain, Options{}, func(ops []history.Op, options Options) bool {
			return Check(ops, options).Valid
		}},
		{"without-porcupine", ops, Options{FinalDrain: true}, func(ops []history.Op, options Options) bool {
			return checkWith(ops, options, cheap...).Valid
		}},
		{"porcupine-only", ops, Options{}, func(ops []history.Op, options Options) bool {
			return checkWith(ops, options, logChecker, committedOffsetChecker).Valid
		}},
		{"validate-only", ops, Options{}, func(ops []history.Op, _ Options) bool {
			return history.Validate(ops) == nil
		}},
	} {
		b.Run(bench.name, func(b *testing.B) {
			for b.Loop() {
				if !bench.run(bench.judged, bench.options) {
					b.Fatal("check failed")
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(bench.judged)), "ns/history-op")
			b.ReportMetric(float64(len(bench.judged)), "history-ops")
		})
	}
}
