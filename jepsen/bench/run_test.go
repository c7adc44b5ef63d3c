package bench

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"
)

// memoryLog is a system under test in memory: senders append to one log
// and acknowledge at once (or fail every failEvery-th record), receivers
// tail it. It checks the load generator's counting, not any speed.
type memoryLog struct {
	mutex     sync.Mutex
	changed   *sync.Cond
	values    [][]byte
	failEvery int64
}

func newMemoryLog() *memoryLog {
	l := &memoryLog{}
	l.changed = sync.NewCond(&l.mutex)
	return l
}

type memorySender struct{ log *memoryLog }

func (s memorySender) Send(_ context.Context, sequence int64, value []byte, done func(error)) {
	if s.log.failEvery > 0 && sequence%s.log.failEvery == s.log.failEvery-1 {
		done(errors.New("refused"))
		return
	}
	s.log.mutex.Lock()
	s.log.values = append(s.log.values, append([]byte(nil), value...))
	s.log.changed.Broadcast()
	s.log.mutex.Unlock()
	done(nil)
}

func (memorySender) Flush(context.Context) error { return nil }
func (memorySender) Close()                      {}

// memoryReceiver reads the log from position next on.
type memoryReceiver struct {
	log  *memoryLog
	next int
}

func (r *memoryReceiver) Receive(ctx context.Context, deliver func([]byte)) error {
	stop := context.AfterFunc(ctx, func() {
		r.log.mutex.Lock()
		r.log.changed.Broadcast()
		r.log.mutex.Unlock()
	})
	defer stop()
	for {
		r.log.mutex.Lock()
		for r.next == len(r.log.values) && ctx.Err() == nil {
			r.log.changed.Wait()
		}
		batch := r.log.values[r.next:]
		r.next = len(r.log.values)
		r.log.mutex.Unlock()
		if ctx.Err() != nil {
			return nil
		}
		for _, v := range batch {
			deliver(v)
		}
	}
}

func (r *memoryReceiver) Close() {}

func TestFixedRateSendsExactlyTheSchedule(t *testing.T) {
	log := newMemoryLog()
	log.failEvery = 10
	load := Load{RecordBytes: 32, Rate: 4000, WarmUp: 100 * time.Millisecond, Duration: 150 * time.Millisecond}
	senders := []Sender{memorySender{log}, memorySender{log}}
	result, err := RunProduce(context.Background(), load, senders)
	if err != nil {
		t.Fatal(err)
	}
	// 4000/s for 250ms is 1000 records, 500 per producer; every 10th of
	// each producer's fails.
	if result.Sent != 1000 || result.Failed != 100 || result.Acknowledged != 900 || result.FirstError != "refused" {
		t.Fatalf("sent %d, failed %d (%q), acknowledged %d; want 1000, 100, 900", result.Sent, result.Failed, result.FirstError, result.Acknowledged)
	}
	// The window [100ms, 250ms) holds 600 intended sends, 540 acknowledged.
	if result.Latency.Count != 540 {
		t.Fatalf("%d latency samples, want 540", result.Latency.Count)
	}
	// Throughput counts acknowledgements from the window's start to the
	// last one: at least the 540 in-window records, at most all 900.
	if result.Records < 540 || result.Records > 900 || result.Seconds < load.Duration.Seconds() {
		t.Fatalf("%d records over %.3fs; want 540 to 900 over at least the %v window", result.Records, result.Seconds, load.Duration)
	}
	if result.LatencyFrom != LatencyFromIntended {
		t.Fatalf("latency from %q", result.LatencyFrom)
	}
	if len(log.values) != 900 {
		t.Fatalf("the log holds %d records, want 900", len(log.values))
	}
	for _, v := range log.values {
		if len(v) != 32 {
			t.Fatalf("a record of %d bytes, want 32", len(v))
		}
	}
}

func TestConsumeStopsAtTheTarget(t *testing.T) {
	log := newMemoryLog()
	load := Load{RecordBytes: 20, Rate: 10_000, Duration: 100 * time.Millisecond}
	if _, err := RunProduce(context.Background(), load, []Sender{memorySender{log}}); err != nil {
		t.Fatal(err)
	}
	if len(log.values) != 1000 {
		t.Fatalf("produced %d, want 1000", len(log.values))
	}
	result, err := RunConsume(context.Background(), ConsumeTarget{Records: 600}, &memoryReceiver{log: log})
	if err != nil {
		t.Fatal(err)
	}
	if !result.Complete || result.Records != 600 || result.Bytes != 600*20 || result.Error != "" {
		t.Fatalf("consumed %+v; want exactly 600 records of 20 bytes", result)
	}
}

func TestEndToEndCountsOnlyThisRunsWindow(t *testing.T) {
	log := newMemoryLog()
	// A record an earlier run left: the receiver starts at the beginning
	// and must skip it by its nonce.
	stale := make([]byte, 32)
	stampValue(stale, time.Millisecond, 12345)
	log.values = append(log.values, stale)
	load := Load{RecordBytes: 32, Rate: 2000, WarmUp: 50 * time.Millisecond, Duration: 100 * time.Millisecond}
	result, err := RunEndToEnd(context.Background(), load, []Sender{memorySender{log}}, &memoryReceiver{log: log})
	if err != nil {
		t.Fatal(err)
	}
	if result.Error != "" || result.Expected != 200 || result.Delivered != 200 || result.Latency.Count != 200 {
		t.Fatalf("expected %d delivered %d samples %d (%s); want 200 each", result.Expected, result.Delivered, result.Latency.Count, result.Error)
	}
	if result.Produce.Sent != 300 {
		t.Fatalf("sent %d, want 300", result.Produce.Sent)
	}
}

func TestBadLoadsAreRefused(t *testing.T) {
	for _, load := range []Load{
		{RecordBytes: StampBytes - 1, Duration: time.Second},
		{RecordBytes: RecordBytesMax + 1, Duration: time.Second},
		{RecordBytes: 100, Rate: -1, Duration: time.Second},
		{RecordBytes: 100},
		{RecordBytes: 100, Duration: time.Second, WarmUp: -time.Second},
	} {
		if _, err := RunProduce(context.Background(), load, []Sender{memorySender{newMemoryLog()}}); err == nil {
			t.Errorf("load %+v accepted", load)
		}
	}
	if _, err := RunProduce(context.Background(), Load{RecordBytes: 100, Duration: time.Second}, nil); err == nil {
		t.Error("a run without producers accepted")
	}
	if _, err := RunConsume(context.Background(), ConsumeTarget{}, &memoryReceiver{log: newMemoryLog()}); err == nil {
		t.Error("a consume without a target accepted")
	}
}
