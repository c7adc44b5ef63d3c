package main

import (
	"bytes"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/twmb/franz-go/pkg/kgo"
)

// TestAWarningThatKeepsComingIsPrintedOncePerInterval: a client retrying a
// broker that is down warns on every dial; the logger prints the first,
// counts the repeats (the retry count and backoff may differ), and prints
// the warning again with that count once the interval has passed. Another
// warning is printed at once, and info lines not at all.
func TestAWarningThatKeepsComingIsPrintedOncePerInterval(t *testing.T) {
	var out bytes.Buffer
	now := time.Unix(1_000, 0)
	l := newRepeatQuietLogger(&out, "sluice consume: ", 10*time.Second, func() time.Time { return now })
	dial := func() {
		l.Log(kgo.LogLevelWarn, "unable to open connection to broker", "addr", "127.0.0.1:9092", "broker", 1, "err", "connection refused")
	}
	joinFailed := func(attempt int) {
		l.Log(kgo.LogLevelError, "group manage loop errored", "group", "g", "consecutive_errors", attempt, "backoff", time.Duration(attempt)*time.Second)
	}

	dial()
	joinFailed(1)
	for i := range 5 {
		now = now.Add(time.Second)
		dial()
		joinFailed(i + 2)
	}
	l.Log(kgo.LogLevelInfo, "beginning to manage the group lifecycle", "group", "g")
	l.Log(kgo.LogLevelWarn, "unable to open connection to broker", "addr", "127.0.0.1:9093", "broker", 2, "err", "connection refused")
	now = now.Add(5 * time.Second) // 10s after the first showing
	dial()
	joinFailed(7)

	want := "" +
		"sluice consume: [WARN] unable to open connection to broker; addr: 127.0.0.1:9092, broker: 1, err: connection refused\n" +
		"sluice consume: [ERROR] group manage loop errored; group: g, consecutive_errors: 1, backoff: 1s\n" +
		"sluice consume: [WARN] unable to open connection to broker; addr: 127.0.0.1:9093, broker: 2, err: connection refused\n" +
		"sluice consume: [WARN] unable to open connection to broker; addr: 127.0.0.1:9092, broker: 1, err: connection refused (and 5 more like it in the last 10s)\n" +
		"sluice consume: [ERROR] group manage loop errored; group: g, consecutive_errors: 7, backoff: 7s (and 5 more like it in the last 10s)\n"
	if diff := cmp.Diff(want, out.String()); diff != "" {
		t.Fatalf("printed (-want +got):\n%s", diff)
	}
}

// TestTheWarningsRememberedAreBounded: past warningKindsMax distinct warnings
// the memory starts over rather than growing; a repeat is then printed again.
func TestTheWarningsRememberedAreBounded(t *testing.T) {
	var out bytes.Buffer
	now := time.Unix(1_000, 0)
	l := newRepeatQuietLogger(&out, "", time.Hour, func() time.Time { return now })
	for i := range warningKindsMax + 1 {
		l.Log(kgo.LogLevelWarn, "w", "i", i)
	}
	if len(l.seen) != 1 {
		t.Fatalf("remembers %d warnings after starting over, want 1", len(l.seen))
	}
	l.Log(kgo.LogLevelWarn, "w", "i", 0)
	if lines := bytes.Count(out.Bytes(), []byte("\n")); lines != warningKindsMax+2 {
		t.Fatalf("printed %d lines, want %d: every distinct warning, then the forgotten repeat", lines, warningKindsMax+2)
	}
}
