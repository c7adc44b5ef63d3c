package main

import (
	"bufio"
	"encoding/binary"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"sync"
	"syscall"
)

// The raw baseline server: the physical limit of this machine for the job
// the brokers do. It appends what producers send to a file and
// acknowledges after a group-commit fdatasync: one sync covers everything
// that arrived while the previous sync ran. It validates nothing, indexes
// nothing, replicates nothing; consumers get the file's bytes as they
// became durable, through sendfile.

// rawLog is one append-only file with its group-commit state.
type rawLog struct {
	path  string
	file  *os.File
	mutex sync.Mutex
	// changed is signalled when written or synced grows.
	changed *sync.Cond
	// written is the file's length; synced the prefix known durable.
	// Invariant: synced <= written.
	written, synced int64
	// waiting are the acknowledgements the next sync releases.
	waiting []rawAck
}

// rawAck is records of one producer connection awaiting a sync.
type rawAck struct {
	producer *rawProducer
	records  int64
}

// rawProducer is one producing connection; only the log's syncer writes
// to it, so its writes need no lock.
type rawProducer struct {
	conn    net.Conn
	durable int64
	failed  bool
}

type rawServer struct {
	dir   string
	mutex sync.Mutex
	logs  map[string]*rawLog
}

// serveRaw is the serve-raw mode: listen on a free loopback port, print
// it, serve until SIGTERM.
func serveRaw(args []string) int {
	flags := flag.NewFlagSet("serve-raw", flag.ContinueOnError)
	dir := flags.String("dir", "", "directory for the log files")
	if err := flags.Parse(args); err != nil {
		return 2
	}
	if err := os.MkdirAll(*dir, 0o755); err != nil {
		fmt.Fprintln(os.Stderr, "serve-raw:", err)
		return 1
	}
	listener, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, "serve-raw:", err)
		return 1
	}
	signals := make(chan os.Signal, 1)
	signal.Notify(signals, syscall.SIGTERM, syscall.SIGINT)
	server := newRawServer(*dir)
	go server.acceptLoop(listener)
	fmt.Println(readyPrefix + listener.Addr().String())
	<-signals
	listener.Close()
	return 0
}

func newRawServer(dir string) *rawServer {
	return &rawServer{dir: dir, logs: map[string]*rawLog{}}
}

// acceptLoop serves every connection on its own goroutine until the
// listener closes.
func (s *rawServer) acceptLoop(listener net.Listener) {
	for {
		conn, err := listener.Accept()
		if err != nil {
			return
		}
		go s.serve(conn)
	}
}

func (s *rawServer) serve(conn net.Conn) {
	defer conn.Close()
	reader := bufio.NewReaderSize(conn, rawBufferBytes)
	header, err := readRawHeader(reader)
	if err != nil {
		fmt.Fprintln(os.Stderr, "serve-raw:", err)
		return
	}
	log, err := s.open(header.name)
	if err != nil {
		fmt.Fprintln(os.Stderr, "serve-raw:", err)
		return
	}
	switch header.mode {
	case rawModeProduce:
		err = log.produce(&rawProducer{conn: conn}, reader)
	case rawModeConsume:
		err = log.consume(conn, header.fromEnd)
	}
	if err != nil && err != io.EOF {
		fmt.Fprintln(os.Stderr, "serve-raw:", err)
	}
}

// open returns the named log, creating its file and its syncer.
func (s *rawServer) open(name string) (*rawLog, error) {
	s.mutex.Lock()
	defer s.mutex.Unlock()
	if log, ok := s.logs[name]; ok {
		return log, nil
	}
	path := filepath.Join(s.dir, name+".log")
	file, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	log := &rawLog{path: path, file: file}
	log.changed = sync.NewCond(&log.mutex)
	s.logs[name] = log
	go log.syncLoop()
	return log, nil
}

// produce reads frames and appends them: whatever complete frames have
// arrived go to the file in one write.
func (l *rawLog) produce(producer *rawProducer, reader *bufio.Reader) error {
	batch := make([]byte, 0, rawBufferBytes)
	var header [rawFrameHeaderBytes]byte
	for {
		batch = batch[:0]
		records := int64(0)
		// Block for one frame, then take every complete frame buffered.
		for records == 0 || reader.Buffered() >= rawFrameHeaderBytes {
			if records > 0 {
				peeked, _ := reader.Peek(rawFrameHeaderBytes)
				length := int(binary.BigEndian.Uint32(peeked))
				if reader.Buffered() < rawFrameHeaderBytes+length {
					break
				}
			}
			if _, err := io.ReadFull(reader, header[:]); err != nil {
				return err
			}
			length := int(binary.BigEndian.Uint32(header[:]))
			if length > rawRecordBytesMax {
				return fmt.Errorf("a frame of %d bytes, more than %d", length, rawRecordBytesMax)
			}
			batch = append(batch, header[:]...)
			start := len(batch)
			batch = append(batch, make([]byte, length)...)
			if _, err := io.ReadFull(reader, batch[start:]); err != nil {
				return err
			}
			records++
		}
		if err := l.append(batch, rawAck{producer: producer, records: records}); err != nil {
			return err
		}
	}
}

func (l *rawLog) append(batch []byte, ack rawAck) error {
	l.mutex.Lock()
	defer l.mutex.Unlock()
	if _, err := l.file.Write(batch); err != nil {
		return err
	}
	l.written += int64(len(batch))
	l.waiting = append(l.waiting, ack)
	l.changed.Broadcast()
	return nil
}

// syncLoop is the group commit: sync what is written, then acknowledge
// every append the sync covered; appends made meanwhile wait for the next.
func (l *rawLog) syncLoop() {
	for {
		l.mutex.Lock()
		for l.written == l.synced {
			l.changed.Wait()
		}
		end, acks := l.written, l.waiting
		l.waiting = nil
		l.mutex.Unlock()

		if err := syscall.Fdatasync(int(l.file.Fd())); err != nil {
			fmt.Fprintln(os.Stderr, "serve-raw: fdatasync:", err)
			os.Exit(1) // a failed sync is not retried: its pages may be gone
		}

		l.mutex.Lock()
		if end < l.synced {
			panic(fmt.Sprintf("serve-raw: synced offset going back from %d to %d", l.synced, end))
		}
		l.synced = end
		l.changed.Broadcast()
		l.mutex.Unlock()

		var producers []*rawProducer
		for _, ack := range acks {
			if !contains(producers, ack.producer) {
				producers = append(producers, ack.producer)
			}
			ack.producer.durable += ack.records
		}
		for _, p := range producers {
			if p.failed {
				continue
			}
			var buffer [rawAckBytes]byte
			binary.BigEndian.PutUint64(buffer[:], uint64(p.durable))
			if _, err := p.conn.Write(buffer[:]); err != nil {
				p.failed = true
			}
		}
	}
}

func contains(list []*rawProducer, p *rawProducer) bool {
	for _, q := range list {
		if q == p {
			return true
		}
	}
	return false
}

// consume streams the durable part of the file from the start (or from
// the durable end at connect time) as it grows, until the consumer hangs
// up. Bytes move file to socket through sendfile.
func (l *rawLog) consume(conn net.Conn, fromEnd bool) error {
	file, err := os.Open(l.path)
	if err != nil {
		return err
	}
	defer file.Close()
	l.mutex.Lock()
	position := int64(0)
	if fromEnd {
		position = l.synced
	}
	l.mutex.Unlock()
	// A consumer that hangs up while no data comes must still end: watch
	// for its close and wake the wait.
	closed := make(chan struct{})
	go func() {
		_, _ = io.Copy(io.Discard, conn)
		close(closed)
		l.mutex.Lock()
		l.changed.Broadcast()
		l.mutex.Unlock()
	}()
	for {
		l.mutex.Lock()
		for l.synced <= position && !isClosed(closed) {
			l.changed.Wait()
		}
		end := l.synced
		l.mutex.Unlock()
		if isClosed(closed) {
			return nil
		}
		if _, err := file.Seek(position, io.SeekStart); err != nil {
			return err
		}
		if _, err := conn.(*net.TCPConn).ReadFrom(io.LimitReader(file, end-position)); err != nil {
			return err
		}
		position = end
	}
}

func isClosed(c chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}
