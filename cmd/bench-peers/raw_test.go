package main

import (
	"bytes"
	"context"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"sluice/jepsen/bench"
)

// TestRawBaselineRoundTrip runs the raw server in process and drives it
// through the same bench code the harness uses.
func TestRawBaselineRoundTrip(t *testing.T) {
	dir := t.TempDir()
	listener, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer listener.Close()
	go newRawServer(dir).acceptLoop(listener)
	h := &harness{settings: settings{partitions: 1, producers: 2, pendingMax: 64}}
	checkRoundTrip(t, &rawConnector{h: h, address: listener.Addr().String()}, h.settings)
	info, err := os.Stat(filepath.Join(dir, "round-trip.log"))
	if err != nil {
		t.Fatal(err)
	}
	// 500 records from the produce phase and 500 from the end-to-end one.
	if want := int64(1000 * (rawFrameHeaderBytes + roundTripRecordBytes)); info.Size() != want {
		t.Fatalf("the log holds %d bytes, want %d: 1000 frames of %d bytes", info.Size(), want, roundTripRecordBytes)
	}
}

const roundTripRecordBytes = 40

// checkRoundTrip drives a connector as the harness does, at a fixed rate
// so that counts are exact: every record sent is acknowledged, read back
// in full from the start, and an end-to-end consumer from the end sees
// every in-window record of a second run.
func checkRoundTrip(t *testing.T, connector connector, s settings) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := connector.prepare(ctx, "round-trip"); err != nil {
		t.Fatal(err)
	}
	senders, err := connector.senders("round-trip", s.producers)
	if err != nil {
		t.Fatal(err)
	}
	// 2000/s for 250ms: exactly 500 records.
	load := bench.Load{RecordBytes: roundTripRecordBytes, Rate: 2000, WarmUp: 50 * time.Millisecond, Duration: 200 * time.Millisecond}
	produced, err := bench.RunProduce(ctx, load, senders)
	closeAll(senders)
	if err != nil {
		t.Fatal(err)
	}
	if produced.Sent != 500 || produced.Acknowledged != 500 || produced.Failed != 0 {
		t.Fatalf("sent %d, acknowledged %d, failed %d (%s); want 500, 500, 0", produced.Sent, produced.Acknowledged, produced.Failed, produced.FirstError)
	}

	receiver, err := connector.receiver(ctx, "round-trip", false)
	if err != nil {
		t.Fatal(err)
	}
	consumed, err := bench.RunConsume(ctx, bench.ConsumeTarget{Records: 500}, receiver)
	receiver.Close()
	if err != nil || !consumed.Complete || consumed.Records != 500 || consumed.Bytes != 500*roundTripRecordBytes {
		t.Fatalf("consumed %+v, %v; want all 500 records of %d bytes", consumed, err, roundTripRecordBytes)
	}

	senders, err = connector.senders("round-trip", 1)
	if err != nil {
		t.Fatal(err)
	}
	defer closeAll(senders)
	receiver, err = connector.receiver(ctx, "round-trip", true)
	if err != nil {
		t.Fatal(err)
	}
	defer receiver.Close()
	e2e, err := bench.RunEndToEnd(ctx, load, senders, receiver)
	if err != nil || e2e.Error != "" || e2e.Expected != 400 || e2e.Delivered != 400 {
		t.Fatalf("end to end: delivered %d of %d (%s, %v); want all 400 in-window records", e2e.Delivered, e2e.Expected, e2e.Error, err)
	}
}

func TestRawHeaderRejectsBadInput(t *testing.T) {
	for _, header := range [][]byte{
		{'X', 0, 0, 1, 'a'},           // unknown mode
		{'P', 2, 0, 1, 'a'},           // from-end not 0 or 1
		{'P', 0, 0, 0},                // empty name
		{'C', 0, 0, 3, '.', '.', '/'}, // a path, not a name
	} {
		if _, err := readRawHeader(bytes.NewReader(header)); err == nil {
			t.Errorf("header %q accepted", header)
		}
	}
}

func TestMedianAndRatios(t *testing.T) {
	if median([]float64{3, 1, 2}) != 2 || median([]float64{4, 1, 3, 2}) != 2.5 || median(nil) != 0 {
		t.Fatal("median of odd, even and empty lists")
	}
	if ratio(3, 2, 1, 1) != "1.50x" || ratio(3, 0, 1, 1) != "-" || ratio(3, 2, 0, 1) != "-" {
		t.Fatal("ratio formatting, or a ratio against a missing figure")
	}
}
