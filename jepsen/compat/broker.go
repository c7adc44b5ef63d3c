package compat

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"sluice/jepsen/ports"
)

const (
	// startTimeout bounds how long a starting broker may take to answer
	// its first Metadata request: it recovers its log before listening.
	startTimeout = 30 * time.Second
	// stopTimeout is how long a SIGTERM may take before SIGKILL follows.
	stopTimeout = 10 * time.Second
	// probeTimeout bounds one readiness probe (connect, Metadata, answer).
	probeTimeout = 2 * time.Second
	// probeInterval{Min,Max} space the readiness probes: the first ones
	// come quickly, later ones back off so a slow start is not flooded.
	probeIntervalMin = 5 * time.Millisecond
	probeIntervalMax = 100 * time.Millisecond
	// logTailBytesMax bounds how much of the broker's log a failed test
	// prints: the end, where the reason usually is.
	logTailBytesMax = 64 << 10
	// probeMetadataVersion is the Metadata version of the readiness
	// probe: flexible, so it exercises the newer header encoding too.
	probeMetadataVersion = 9
)

// Options configures a broker StartBroker runs.
type Options struct {
	// NodeID is the broker's node.id; 0 means 1.
	NodeID int32
	// Settings are Kafka broker settings passed as --set key=value, e.g.
	// "log.segment.bytes=1048576".
	Settings []string
	// LogLevel is the broker's --log-level; empty means info.
	LogLevel string
}

// Broker is one sluice broker process on loopback, with its own data
// directory and port, both kept across Kill and Restart. Its methods are
// for one goroutine at a time.
type Broker struct {
	t       testing.TB
	binary  string
	options Options
	dataDir string
	logPath string
	address string
	// running is the live process; nil between Kill/Stop and Restart.
	running *process
}

// process is one run of the binary. exited is closed once the process is
// gone, after which state says how it ended.
type process struct {
	cmd    *exec.Cmd
	log    *os.File
	exited chan struct{}
	state  *os.ProcessState
	err    error
}

// StartBroker builds the binary if needed, starts a broker on a free
// loopback port with an empty data directory, and returns once it answers
// Metadata. The broker is stopped when the test ends; if the test failed,
// the end of its log is printed.
func StartBroker(t testing.TB, options Options) *Broker {
	t.Helper()
	if options.NodeID == 0 {
		options.NodeID = 1
	}
	if options.LogLevel == "" {
		options.LogLevel = "info"
	}
	dir := t.TempDir()
	b := &Broker{
		t:       t,
		binary:  BuildBinary(t),
		options: options,
		dataDir: filepath.Join(dir, "data"),
		logPath: filepath.Join(dir, "broker.log"),
		address: freeLoopbackAddress(t),
	}
	// Registered after TempDir's own cleanup, so it runs before the
	// directory is removed.
	t.Cleanup(func() {
		b.Stop()
		if t.Failed() {
			t.Logf("broker %s log (last %d bytes at most):\n%s", b.address, logTailBytesMax, b.LogTail())
		}
	})
	if err := b.start(); err != nil {
		t.Fatal(err)
	}
	return b
}

// Addr is the broker's host:port.
func (b *Broker) Addr() string { return b.address }

// DataDir is the broker's data directory.
func (b *Broker) DataDir() string { return b.dataDir }

// Alive reports whether the broker process is running.
func (b *Broker) Alive() bool {
	if b.running == nil {
		return false
	}
	select {
	case <-b.running.exited:
		return false
	default:
		return true
	}
}

// Kill ends the broker with SIGKILL, as a crash would, and waits for the
// process to be gone. Unsynced writes are the operating system's to keep:
// the page cache survives a process kill.
func (b *Broker) Kill() {
	p := b.running
	if p == nil {
		return
	}
	b.running = nil
	_ = p.cmd.Process.Signal(syscall.SIGKILL)
	<-p.exited
	p.log.Close()
}

// Pause stops the broker with SIGSTOP: it keeps its connections and its
// port but answers nothing, as a broker in a long GC pause or a frozen VM
// does. Resume undoes it; a test that pauses must resume before its
// cleanup stops the broker.
func (b *Broker) Pause() {
	if p := b.running; p != nil {
		_ = p.cmd.Process.Signal(syscall.SIGSTOP)
	}
}

// Resume continues a paused broker with SIGCONT.
func (b *Broker) Resume() {
	if p := b.running; p != nil {
		_ = p.cmd.Process.Signal(syscall.SIGCONT)
	}
}

// Stop asks the broker to shut down with SIGTERM and waits; after
// stopTimeout it sends SIGKILL. A broker that had already died, or that
// exits with an error on SIGTERM, fails the test (with Errorf, which any
// goroutine may call): neither is a clean stop.
func (b *Broker) Stop() {
	p := b.running
	if p == nil {
		return
	}
	b.running = nil
	defer p.log.Close()
	select {
	case <-p.exited:
		b.t.Errorf("broker %s had exited before Stop: %v", b.address, exitDescription(p))
		return
	default:
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	timer := time.NewTimer(stopTimeout)
	defer timer.Stop()
	select {
	case <-p.exited:
		if !p.state.Success() {
			b.t.Errorf("broker %s exited uncleanly on SIGTERM: %v", b.address, exitDescription(p))
		}
	case <-timer.C:
		_ = p.cmd.Process.Signal(syscall.SIGKILL)
		<-p.exited
		b.t.Errorf("broker %s ignored SIGTERM for %v and was killed", b.address, stopTimeout)
	}
}

// Restart stops the broker if it runs and starts it again on the same
// data directory and port, returning once it answers Metadata. It returns
// an error rather than failing the test, so that a subtest can call it on
// a broker its parent test started.
func (b *Broker) Restart() error {
	b.Stop()
	return b.start()
}

// LogTail is the end of everything the broker has written to stderr and
// stdout, across restarts, at most logTailBytesMax bytes.
func (b *Broker) LogTail() string {
	f, err := os.Open(b.logPath)
	if err != nil {
		return fmt.Sprintf("(no log: %v)", err)
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return fmt.Sprintf("(log unreadable: %v)", err)
	}
	offset := max(info.Size()-logTailBytesMax, 0)
	tail := make([]byte, info.Size()-offset)
	if _, err := f.ReadAt(tail, offset); err != nil && !errors.Is(err, io.EOF) {
		return fmt.Sprintf("(log unreadable: %v)", err)
	}
	return string(tail)
}

// start launches the binary and waits until it is ready.
func (b *Broker) start() error {
	if b.running != nil {
		panic("compat: start with a broker still running")
	}
	log, err := os.OpenFile(b.logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("broker log: %w", err)
	}
	fmt.Fprintf(log, "=== compat harness: starting broker on %s at %s\n", b.address, time.Now().Format(time.RFC3339Nano))
	args := []string{
		"broker",
		"--node-id", strconv.Itoa(int(b.options.NodeID)),
		"--listen", b.address,
		"--data", b.dataDir,
		"--log-level", b.options.LogLevel,
	}
	for _, setting := range b.options.Settings {
		args = append(args, "--set", setting)
	}
	cmd := exec.Command(b.binary, args...)
	cmd.Stdout = log
	cmd.Stderr = log
	dieWithParent(cmd)
	if err := cmd.Start(); err != nil {
		log.Close()
		return fmt.Errorf("starting %s: %w", b.binary, err)
	}
	p := &process{cmd: cmd, log: log, exited: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		p.state = cmd.ProcessState
		close(p.exited)
	}()
	b.running = p
	if err := b.waitReady(p); err != nil {
		return fmt.Errorf("broker %s did not become ready: %w\n%s", b.address, err, b.LogTail())
	}
	return nil
}

// waitReady probes the broker with Metadata until it answers, the process
// exits, or startTimeout passes.
func (b *Broker) waitReady(p *process) error {
	deadline := time.Now().Add(startTimeout)
	interval := probeIntervalMin
	var last error
	for attempt := int32(1); ; attempt++ {
		last = probeMetadata(b.address, attempt)
		if last == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("no Metadata answer within %v: %w", startTimeout, last)
		}
		timer := time.NewTimer(interval)
		select {
		case <-p.exited:
			timer.Stop()
			return fmt.Errorf("process exited while starting: %v", exitDescription(p))
		case <-timer.C:
		}
		interval = min(interval*2, probeIntervalMax)
	}
}

// probeMetadata connects and asks for the cluster's brokers; the broker
// is ready when it lists at least one.
func probeMetadata(address string, correlationID int32) error {
	conn, err := net.DialTimeout("tcp", address, probeTimeout)
	if err != nil {
		return err
	}
	defer conn.Close()
	req := kmsg.NewPtrMetadataRequest()
	req.SetVersion(probeMetadataVersion)
	req.Topics = []kmsg.MetadataRequestTopic{} // none: only the brokers
	resp, err := RoundTrip(conn, req, correlationID, probeTimeout)
	if err != nil {
		return err
	}
	if brokers := resp.(*kmsg.MetadataResponse).Brokers; len(brokers) == 0 {
		return errors.New("metadata lists no brokers yet")
	}
	return nil
}

// freeLoopbackAddress picks a free port for the broker to bind, outside
// the range client connections take theirs from (see package ports).
func freeLoopbackAddress(t testing.TB) string {
	t.Helper()
	address, err := ports.Loopback()
	if err != nil {
		t.Fatalf("finding a free port: %v", err)
	}
	return address
}

// exitDescription says how a finished process ended.
func exitDescription(p *process) string {
	if p.state == nil {
		return fmt.Sprintf("wait failed: %v", p.err)
	}
	return p.state.String()
}
