package disk_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"sluice/core"
	"sluice/core/batch"
	sluicelog "sluice/core/log"
	"sluice/disk"
)

// The log's append path on a real disk, measured against the floor it sits
// on: one pwrite of the same bytes plus one fdatasync per operation. The
// ratio is what the log's bookkeeping, its event loop round trip and its
// sync machinery cost on top of the disk; absolute figures depend on the
// machine, ratios much less.

// benchmarkBatchBytes is the size of the batch each operation writes.
const benchmarkBatchBytes = 16 << 10

// benchmarkBatch builds one batch of about benchmarkBatchBytes.
func benchmarkBatch() []byte {
	value := make([]byte, 1000)
	for i := range value {
		value[i] = byte(i * 7)
	}
	spec := batch.Spec{BaseTimestamp: time.Now().UnixMilli(), ProducerID: batch.NoProducerID}
	for len(spec.Records)*(len(value)+8) < benchmarkBatchBytes-batch.HeaderSize {
		spec.Records = append(spec.Records, batch.Record{Value: value})
	}
	return batch.Build(spec)
}

// wallClock is core.Clock on the machine's clocks, enough for the log.
type wallClock struct{ started time.Time }

func (c wallClock) Now() time.Time                                 { return time.Now() }
func (c wallClock) Elapsed() time.Duration                         { return time.Since(c.started) }
func (c wallClock) AfterFunc(d time.Duration, f func()) core.Timer { return time.AfterFunc(d, f) }

// logBench is a log on a real disk with a loop that runs what the disk's
// sync workers post back.
type logBench struct {
	log         *sluicelog.Log
	fs          *disk.FS
	completions chan func()
	batch       []byte
}

func newLogBench(tb testing.TB) *logBench {
	completions := make(chan func(), 1024)
	fs, err := disk.New(tb.TempDir(), func(f func()) { completions <- f })
	if err != nil {
		tb.Fatal(err)
	}
	world := core.World{
		Clock: wallClock{started: time.Now()},
		FS:    fs,
		Halt:  func(reason error) { panic(reason) },
	}
	l, err := sluicelog.Open(world, "topic-0", sluicelog.DefaultConfig())
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		l.Close()
		fs.Close()
	})
	return &logBench{log: l, fs: fs, completions: completions, batch: benchmarkBatch()}
}

// appendAndSync appends the batch, syncs, and runs the loop until the log
// reports it durable.
func (lb *logBench) appendAndSync(tb testing.TB) {
	info, err := lb.log.Append(lb.batch, 0)
	if err != nil {
		tb.Fatal(err)
	}
	lb.log.Sync()
	for lb.log.SyncedOffset() <= info.LastOffset {
		(<-lb.completions)()
	}
}

// rawBench is the floor: a file written with pwrite and made durable with
// fdatasync, nothing else.
type rawBench struct {
	file   *os.File
	offset int64
	batch  []byte
}

func newRawBench(tb testing.TB) *rawBench {
	file, err := os.OpenFile(filepath.Join(tb.TempDir(), "raw"), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { file.Close() })
	return &rawBench{file: file, batch: benchmarkBatch()}
}

func (rb *rawBench) writeAndSync(tb testing.TB) {
	if _, err := rb.file.WriteAt(rb.batch, rb.offset); err != nil {
		tb.Fatal(err)
	}
	if err := unix.Fdatasync(int(rb.file.Fd())); err != nil {
		tb.Fatal(err)
	}
	rb.offset += int64(len(rb.batch))
}

// BenchmarkLogAppendSync: append a 16 KiB batch, sync, wait for the log to
// report it durable.
func BenchmarkLogAppendSync(b *testing.B) {
	lb := newLogBench(b)
	lb.appendAndSync(b) // the first sync also writes the checkpoint
	b.SetBytes(int64(len(lb.batch)))
	for b.Loop() {
		lb.appendAndSync(b)
	}
}

// BenchmarkRawWriteFdatasync: pwrite the same bytes, fdatasync.
func BenchmarkRawWriteFdatasync(b *testing.B) {
	rb := newRawBench(b)
	b.SetBytes(int64(len(rb.batch)))
	for b.Loop() {
		rb.writeAndSync(b)
	}
}

// BenchmarkLogOverRaw runs both, interleaved so that both see the same
// disk conditions, and reports each one's time per operation and their
// ratio (log/raw: 1.0 would mean the log costs nothing over the disk).
func BenchmarkLogOverRaw(b *testing.B) {
	lb := newLogBench(b)
	rb := newRawBench(b)
	lb.appendAndSync(b)
	var logTime, rawTime time.Duration
	for i := 0; b.Loop(); i++ {
		// Alternate which goes first, so neither always follows the other's
		// journal commit.
		first, second := lb.appendAndSync, rb.writeAndSync
		if i%2 == 1 {
			first, second = second, first
		}
		start := time.Now()
		first(b)
		middle := time.Now()
		second(b)
		end := time.Now()
		if i%2 == 0 {
			logTime, rawTime = logTime+middle.Sub(start), rawTime+end.Sub(middle)
		} else {
			rawTime, logTime = rawTime+middle.Sub(start), logTime+end.Sub(middle)
		}
	}
	b.ReportMetric(float64(logTime.Nanoseconds())/float64(b.N), "log-ns/op")
	b.ReportMetric(float64(rawTime.Nanoseconds())/float64(b.N), "raw-ns/op")
	b.ReportMetric(float64(logTime)/float64(rawTime), "log/raw")
}
