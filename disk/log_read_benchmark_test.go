package disk_test

import (
	"os"
	"testing"
	"time"
)

// The log's fetch path on a real disk (the page cache, in practice):
// Log.Read of a consumer-sized answer, measured against one pread of the
// same bytes into a reused buffer. The ratio is what the read costs over
// the copy out of the kernel: the CRC check of every batch served, the
// index lookup, and the answer's own buffer.

// fetchAnswerBytes is kgo's and Java's default per-partition fetch size
// (fetch.max.partition.bytes, max.partition.fetch.bytes).
const fetchAnswerBytes = 1 << 20

// fetchBench is a log holding a few answers' worth of batches.
func newFetchBench(tb testing.TB) *logBench {
	lb := newLogBench(tb)
	for written := 0; written < 4*fetchAnswerBytes; written += len(lb.batch) {
		if _, err := lb.log.Append(lb.batch, 0); err != nil {
			tb.Fatal(err)
		}
	}
	lb.log.Sync()
	for lb.log.SyncedOffset() < lb.log.EndOffset() {
		(<-lb.completions)()
	}
	return lb
}

func (lb *logBench) readAnswer(tb testing.TB) int {
	records, err := lb.log.Read(0, lb.log.EndOffset(), fetchAnswerBytes, true)
	if err != nil || len(records) == 0 {
		tb.Fatalf("read: %d bytes, %v", len(records), err)
	}
	return len(records)
}

// BenchmarkLogRead: read one 1 MiB answer from the start of the log.
func BenchmarkLogRead(b *testing.B) {
	lb := newFetchBench(b)
	b.SetBytes(int64(lb.readAnswer(b)))
	b.ReportAllocs()
	for b.Loop() {
		lb.readAnswer(b)
	}
}

// BenchmarkLogReadOverRaw runs Log.Read and a pread of as many bytes of
// the segment file, interleaved, and reports their ratio (log/raw).
func BenchmarkLogReadOverRaw(b *testing.B) {
	lb := newFetchBench(b)
	answerBytes := lb.readAnswer(b)
	names, err := lb.fs.ReadDir("topic-0")
	if err != nil {
		b.Fatal(err)
	}
	var segment *os.File
	for _, name := range names {
		if len(name) > 4 && name[len(name)-4:] == ".log" {
			segment, err = os.Open(lb.fs.Root() + "/topic-0/" + name)
			if err != nil {
				b.Fatal(err)
			}
		}
	}
	if segment == nil {
		b.Fatal("no segment file")
	}
	defer segment.Close()
	buffer := make([]byte, answerBytes)
	var logTime, rawTime time.Duration
	b.SetBytes(int64(answerBytes))
	for b.Loop() {
		start := time.Now()
		lb.readAnswer(b)
		middle := time.Now()
		if _, err := segment.ReadAt(buffer, 0); err != nil {
			b.Fatal(err)
		}
		end := time.Now()
		logTime, rawTime = logTime+middle.Sub(start), rawTime+end.Sub(middle)
	}
	b.ReportMetric(float64(logTime.Nanoseconds())/float64(b.N), "log-ns/op")
	b.ReportMetric(float64(rawTime.Nanoseconds())/float64(b.N), "raw-ns/op")
	b.ReportMetric(float64(logTime)/float64(rawTime), "log/raw")
}
