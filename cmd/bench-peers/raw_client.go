package main

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"path/filepath"
	"sync"

	"sluice/jepsen/bench"
)

// startRaw runs the raw baseline server in a child process (this
// program's serve-raw mode).
func startRaw(ctx context.Context, h *harness, dir string) (*target, error) {
	c, address, err := startServeChild("raw server", filepath.Join(dir, "raw.log"), "serve-raw", "--dir", filepath.Join(dir, "data"))
	if err != nil {
		return nil, err
	}
	return &target{children: []*child{c}, connector: &rawConnector{h: h, address: address}}, nil
}

type rawConnector struct {
	h       *harness
	address string
}

// prepare has nothing to do: a log file is created on first use.
func (r *rawConnector) prepare(context.Context, string) error { return nil }

func (r *rawConnector) senders(topic string, count int) ([]bench.Sender, error) {
	var senders []bench.Sender
	for range count {
		s, err := newRawSender(r.address, topic, r.h.settings.pendingMax)
		if err != nil {
			closeAll(senders)
			return nil, err
		}
		senders = append(senders, s)
	}
	return senders, nil
}

// rawSender pipelines frames over one connection: Send appends a frame to
// a buffer, a writer goroutine sends whatever accumulated in one write,
// and a reader goroutine completes records in order as cumulative
// acknowledgements arrive. At most pendingMax records are unacknowledged.
type rawSender struct {
	conn net.Conn
	// slots holds one token per record that may still be sent.
	slots chan struct{}
	// wake tells the writer there is something to write.
	wake chan struct{}

	mutex sync.Mutex
	// outgoing are frames not yet written.
	outgoing []byte
	// pending are the done callbacks of unacknowledged records, in order.
	pending []func(error)
	// drained are Flush calls waiting for pending to empty.
	drained []chan struct{}
	// broken is the connection's error, once it failed.
	broken error
}

func newRawSender(address, topic string, pendingMax int) (*rawSender, error) {
	conn, err := net.Dial("tcp", address)
	if err != nil {
		return nil, err
	}
	if err := writeRawHeader(conn, rawHeader{mode: rawModeProduce, name: topic}); err != nil {
		conn.Close()
		return nil, err
	}
	s := &rawSender{conn: conn, slots: make(chan struct{}, pendingMax), wake: make(chan struct{}, 1)}
	for range pendingMax {
		s.slots <- struct{}{}
	}
	go s.writeLoop()
	go s.readLoop()
	return s, nil
}

func (s *rawSender) Send(ctx context.Context, _ int64, value []byte, done func(error)) {
	select {
	case <-s.slots:
	case <-ctx.Done():
		done(ctx.Err())
		return
	}
	s.mutex.Lock()
	if s.broken != nil {
		err := s.broken
		s.mutex.Unlock()
		s.slots <- struct{}{}
		done(err)
		return
	}
	s.outgoing = binary.BigEndian.AppendUint32(s.outgoing, uint32(len(value)))
	s.outgoing = append(s.outgoing, value...)
	s.pending = append(s.pending, done)
	s.mutex.Unlock()
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

func (s *rawSender) writeLoop() {
	var spare []byte
	for range s.wake {
		// Swap buffers: senders append to the spare while this one is
		// written. An empty buffer is left in place, so the two never
		// become one.
		s.mutex.Lock()
		batch := s.outgoing
		if len(batch) == 0 {
			s.mutex.Unlock()
			continue
		}
		s.outgoing = spare[:0]
		s.mutex.Unlock()
		if _, err := s.conn.Write(batch); err != nil {
			s.fail(err)
			return
		}
		spare = batch
	}
}

func (s *rawSender) readLoop() {
	reader := bufio.NewReader(s.conn)
	var buffer [rawAckBytes]byte
	acknowledged := int64(0)
	for {
		if _, err := io.ReadFull(reader, buffer[:]); err != nil {
			s.fail(err)
			return
		}
		durable := int64(binary.BigEndian.Uint64(buffer[:]))
		s.mutex.Lock()
		count := durable - acknowledged
		if count < 0 || count > int64(len(s.pending)) {
			s.mutex.Unlock()
			s.fail(fmt.Errorf("acknowledgement of %d records with %d acknowledged and %d pending", durable, acknowledged, len(s.pending)))
			return
		}
		completed := s.pending[:count]
		s.pending = s.pending[count:]
		var drained []chan struct{}
		if len(s.pending) == 0 {
			drained, s.drained = s.drained, nil
		}
		s.mutex.Unlock()
		acknowledged = durable
		for _, done := range completed {
			done(nil)
			s.slots <- struct{}{}
		}
		for _, d := range drained {
			close(d)
		}
	}
}

// fail completes every pending record with err; later sends fail at once.
func (s *rawSender) fail(err error) {
	s.mutex.Lock()
	if s.broken == nil {
		s.broken = err
	}
	pending, drained := s.pending, s.drained
	s.pending, s.drained = nil, nil
	s.mutex.Unlock()
	for _, done := range pending {
		done(err)
		s.slots <- struct{}{}
	}
	for _, d := range drained {
		close(d)
	}
}

func (s *rawSender) Flush(ctx context.Context) error {
	s.mutex.Lock()
	if len(s.pending) == 0 {
		s.mutex.Unlock()
		return nil
	}
	drained := make(chan struct{})
	s.drained = append(s.drained, drained)
	s.mutex.Unlock()
	select {
	case <-drained:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (s *rawSender) Close() {
	s.conn.Close()
	close(s.wake)
}

// rawReceiver reads a log's frames over one connection.
type rawReceiver struct {
	conn net.Conn
}

func (r *rawConnector) receiver(_ context.Context, topic string, fromEnd bool) (bench.Receiver, error) {
	conn, err := net.Dial("tcp", r.address)
	if err != nil {
		return nil, err
	}
	if err := writeRawHeader(conn, rawHeader{mode: rawModeConsume, fromEnd: fromEnd, name: topic}); err != nil {
		conn.Close()
		return nil, err
	}
	return &rawReceiver{conn: conn}, nil
}

func (r *rawReceiver) Receive(ctx context.Context, deliver func([]byte)) error {
	stop := context.AfterFunc(ctx, func() { r.conn.Close() })
	defer stop()
	reader := bufio.NewReaderSize(r.conn, rawBufferBytes)
	var header [rawFrameHeaderBytes]byte
	value := make([]byte, 0, rawRecordBytesMax)
	for {
		if _, err := io.ReadFull(reader, header[:]); err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
		length := int(binary.BigEndian.Uint32(header[:]))
		if length > rawRecordBytesMax {
			return errors.New("a frame larger than any record")
		}
		value = value[:length]
		if _, err := io.ReadFull(reader, value); err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
		deliver(value)
	}
}

func (r *rawReceiver) Close() { r.conn.Close() }
