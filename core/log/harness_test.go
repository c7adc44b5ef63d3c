package log_test

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"time"

	"sluice/core"
	"sluice/core/batch"
	"sluice/core/log"
	"sluice/sim/kernel"
	"sluice/sim/simdisk"
)

// tester is what the helpers need of a test: *testing.T and *rapid.T both
// provide it.
type tester interface {
	Helper()
	Fatalf(format string, args ...any)
	Fatal(args ...any)
	Logf(format string, args ...any)
}

// harness is one simulated machine for the log's tests: a kernel, a process
// that can crash, a simulated disk and a clock on virtual time.
type harness struct {
	t       tester
	kernel  *kernel.Kernel
	process *kernel.Process
	disk    *simdisk.Disk
	clock   *testClock
	halts   []error
	// codecs, when set, is the World's Codecs.
	codecs core.Codecs
	// canaries are planted in every World this harness makes.
	canaries []string
	// buggifyAll, when set, switches on every BUGGIFY site, firing each
	// time it is reached, in every World this harness makes.
	buggifyAll bool
}

const testDir = "topic-0"

// testEpoch is the wall-clock date virtual time zero maps to.
var testEpoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func newHarness(t tester, seed uint64, faults simdisk.Faults) *harness {
	k := kernel.NewKernel(seed, nil)
	process := kernel.NewProcess("node")
	h := &harness{
		t:       t,
		kernel:  k,
		process: process,
		disk:    simdisk.New(k, process, kernel.NewRand(seed, "disk"), faults),
	}
	h.clock = &testClock{kernel: k, owner: process}
	return h
}

// debugLogs, when set with SLUICE_LOG_DEBUG=1, prints what the log logs.
var debugLogs = os.Getenv("SLUICE_LOG_DEBUG") != ""

func (h *harness) world(canaries ...string) core.World {
	logger := slog.New(slog.DiscardHandler)
	if debugLogs {
		logger = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	w := core.World{
		Log:      logger,
		Clock:    h.clock,
		FS:       h.disk,
		Entropy:  kernel.NewRand(h.kernel.Seed(), "entropy"),
		Halt:     func(reason error) { h.halts = append(h.halts, reason) },
		Canaries: core.NewCanaries(append(canaries, h.canaries...)...),
		Codecs:   h.codecs,
	}
	if h.buggifyAll {
		w.Buggify = core.NewBuggify(w.Entropy, 1, 1)
	}
	return w
}

func (h *harness) open(config log.Config) *log.Log {
	h.t.Helper()
	l, err := log.Open(h.world(), testDir, config)
	if err != nil {
		h.t.Fatalf("Open: %v", err)
	}
	return l
}

// drain runs every pending event: syncs in flight complete.
func (h *harness) drain() {
	for h.kernel.Step() {
	}
}

// syncAll starts a sync and runs until the log has nothing left to sync.
func (h *harness) syncAll(l *log.Log) {
	h.t.Helper()
	l.Sync()
	h.drain()
	if l.SyncedOffset() != l.EndOffset() {
		h.t.Fatalf("after a full sync SyncedOffset is %d, EndOffset %d", l.SyncedOffset(), l.EndOffset())
	}
}

// crash kills the process and the disk's unsynced state, and restarts.
func (h *harness) crash() {
	h.process.Crash()
	h.disk.Crash()
	h.process.Restart()
	h.clock.restart()
}

// advance moves virtual time forward, running what falls due.
func (h *harness) advance(d time.Duration) {
	h.kernel.RunUntil(h.kernel.Now() + int64(d))
}

// testClock is core.Clock on the kernel's virtual time.
type testClock struct {
	kernel  *kernel.Kernel
	owner   *kernel.Process
	started int64
}

func (c *testClock) Now() time.Time { return testEpoch.Add(time.Duration(c.kernel.Now())) }
func (c *testClock) Elapsed() time.Duration {
	return time.Duration(c.kernel.Now() - c.started)
}
func (c *testClock) AfterFunc(d time.Duration, f func()) core.Timer {
	return testTimer{cancel: c.kernel.Schedule(int64(d), c.owner, "timer", f)}
}
func (c *testClock) restart() { c.started = c.kernel.Now() }

type testTimer struct{ cancel func() bool }

func (t testTimer) Stop() bool { return t.cancel() }

// nowMilliseconds is the clock's wall time as a Kafka timestamp.
func (h *harness) nowMilliseconds() int64 { return h.clock.Now().UnixMilli() }

// makeBatch builds a batch of records, each with a value of valueBytes,
// whose max timestamp is timestamp. Its base offset and epoch are left for
// the log to stamp.
func makeBatch(records, valueBytes int, timestamp int64) []byte {
	spec := batch.Spec{BaseTimestamp: timestamp, ProducerID: batch.NoProducerID}
	for i := range records {
		value := bytes.Repeat([]byte{byte('a' + i%26)}, valueBytes)
		spec.Records = append(spec.Records, batch.Record{Value: value})
	}
	return batch.Build(spec)
}

// replicatedBatch builds a batch already stamped with offset and epoch.
func replicatedBatch(offset int64, epoch int32, records, valueBytes int, timestamp int64) []byte {
	b := makeBatch(records, valueBytes, timestamp)
	batch.SetBaseOffset(b, offset)
	batch.SetLeaderEpoch(b, epoch)
	return b
}

// mustAppend appends and returns the stamped batch bytes.
func mustAppend(t tester, l *log.Log, b []byte, epoch int32) log.AppendInfo {
	t.Helper()
	info, err := l.Append(b, epoch)
	if err != nil {
		t.Fatalf("Append: %v", err)
	}
	return info
}

// splitRead parses what Read returned into batches, failing on anything
// that is not whole, CRC-valid batches.
func splitRead(t tester, b []byte) []batch.Header {
	t.Helper()
	var headers []batch.Header
	s := batch.Scanner{Buf: b, VerifyCRC: true}
	for s.Next() {
		headers = append(headers, s.Header())
	}
	if s.Err() != nil {
		t.Fatalf("Read returned bytes that are not whole valid batches: %v", s.Err())
	}
	return headers
}

// readAll reads the whole log from its start, batch by batch, and returns
// the stored batches in order.
func readAll(t tester, l *log.Log) [][]byte {
	t.Helper()
	var batches [][]byte
	for offset := l.StartOffset(); offset < l.EndOffset(); {
		b, err := l.Read(offset, l.EndOffset(), 1, true)
		if err != nil {
			t.Fatalf("Read(%d): %v", offset, err)
		}
		headers := splitRead(t, b)
		if len(headers) != 1 {
			t.Fatalf("Read(%d, maxBytes 1, atLeastOne) returned %d batches, want 1", offset, len(headers))
		}
		batches = append(batches, b)
		offset = headers[0].NextOffset()
	}
	return batches
}

func expectError(t tester, err, want error) {
	t.Helper()
	if !errors.Is(err, want) {
		t.Fatalf("got error %v, want %v", err, want)
	}
}

func smallConfig() log.Config {
	c := log.DefaultConfig()
	c.SegmentBytes = 1024
	c.IndexIntervalBytes = 100
	return c
}

func describe(b []byte) string {
	h, err := batch.Parse(b)
	if err != nil {
		return fmt.Sprintf("<%v>", err)
	}
	return fmt.Sprintf("[%d..%d e%d %dB]", h.BaseOffset, h.LastOffset(), h.LeaderEpoch, len(b))
}
