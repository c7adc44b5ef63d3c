package net

import (
	"encoding/binary"
	"fmt"
	"testing"

	"sluice/core"
)

// benchmarkWindowBytes bounds the bytes in flight from client to server, so
// the client's send queue never overflows however fast it sends.
const benchmarkWindowBytes = 8 << 20

// BenchmarkLoopbackFrames sends frames one way over loopback, through
// Listen and Dialer with a loop at each end, and reports frames/s and MB/s.
// The server acknowledges every quarter window with a frame carrying its
// count, which lets the client send more. Read the figures only as ratios
// against a peer measured in the same run.
func BenchmarkLoopbackFrames(b *testing.B) {
	for _, frameBytes := range []int{1 << 10, 64 << 10} {
		b.Run(fmt.Sprintf("frame=%dKiB", frameBytes>>10), func(b *testing.B) {
			benchmarkLoopbackFrames(b, frameBytes)
		})
	}
}

func benchmarkLoopbackFrames(b *testing.B, frameBytes int) {
	windowFrames := max(benchmarkWindowBytes/frameBytes, 4)
	acknowledgeEvery := windowFrames / 4
	total := b.N
	server, client := startNode(b), startNode(b)

	done := make(chan struct{})
	l := listen(b, server, acceptorFunc(func(c core.Conn) core.Handler {
		received := 0
		return frameFunc(func([]byte) {
			received++
			if received%acknowledgeEvery == 0 || received == total {
				c.Send(binary.BigEndian.AppendUint64(nil, uint64(received)))
			}
			if received == total {
				close(done)
			}
		})
	}), DefaultLimits())
	d := newTestDialer(b, client, DefaultLimits())

	frame := make([]byte, frameBytes) // shared by every Send: nobody writes to it
	sent, acknowledged := 0, 0        // client loop only
	var conn core.Conn
	sendWindow := func() {
		for sent < total && sent-acknowledged < windowFrames {
			if !conn.Send(frame) {
				panic("benchmark: Send refused")
			}
			sent++
		}
	}
	client.do(b, func() {
		conn = d.Dial(l.Addr(), frameFunc(func(acknowledgement []byte) {
			acknowledged = int(binary.BigEndian.Uint64(acknowledgement))
			sendWindow()
		}))
	})

	b.SetBytes(int64(frameBytes))
	b.ResetTimer()
	client.do(b, sendWindow)
	wait(b, done, "every frame to arrive")
	b.StopTimer()
	b.ReportMetric(float64(total)/b.Elapsed().Seconds(), "frames/s")
}

// acceptorFunc is an Acceptor made of a function.
type acceptorFunc func(core.Conn) core.Handler

func (f acceptorFunc) Accept(c core.Conn) core.Handler { return f(c) }

// frameFunc is a Handler that passes frames to a function and ignores
// Closed.
type frameFunc func([]byte)

func (f frameFunc) Frame(frame []byte) { f(frame) }
func (f frameFunc) Closed(error)       {}
