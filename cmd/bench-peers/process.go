package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"
)

// Bounds of child processes.
const (
	// readyTimeout bounds how long a child may take to say it listens.
	readyTimeout = time.Minute
	// stopTimeout is how long a SIGTERM may take before SIGKILL follows.
	stopTimeout = 15 * time.Second
	// logTailBytesMax bounds how much of a failed child's log a row shows.
	logTailBytesMax = 600
	// readyPrefix starts the line a serve-* child prints once it listens.
	readyPrefix = "ready "
)

// child is one process of a system under test: a sluice node, a kfake
// cluster, a NATS server, the raw baseline server. Its stdout and stderr
// go to a log file in the system's directory.
type child struct {
	name    string
	cmd     *exec.Cmd
	logPath string
	log     *os.File
	exited  chan struct{}
	err     error
}

// startChild runs program with args, its output going to logPath.
func startChild(name, logPath, program string, args ...string) (*child, error) {
	log, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	c := &child{name: name, logPath: logPath, log: log, exited: make(chan struct{})}
	c.cmd = exec.Command(program, args...)
	c.cmd.Stdout = log
	c.cmd.Stderr = log
	c.cmd.SysProcAttr = childProcessAttributes()
	if err := c.cmd.Start(); err != nil {
		log.Close()
		return nil, fmt.Errorf("starting %s: %w", name, err)
	}
	go func() {
		c.err = c.cmd.Wait()
		close(c.exited)
	}()
	return c, nil
}

// startServeChild runs this program in one of its serve-* modes and
// returns the text after "ready " on the first line it prints that starts
// so: the addresses to connect to.
func startServeChild(name, logPath string, args ...string) (*child, string, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, "", err
	}
	c, err := startChild(name, logPath, self, args...)
	if err != nil {
		return nil, "", err
	}
	deadline := time.Now().Add(readyTimeout)
	for time.Now().Before(deadline) {
		if line, ok := c.findReadyLine(); ok {
			return c, line, nil
		}
		select {
		case <-c.exited:
			if line, ok := c.findReadyLine(); ok {
				return c, line, nil
			}
			return nil, "", fmt.Errorf("%s exited before it was ready: %v; log: %s", name, c.err, c.logTail())
		case <-time.After(20 * time.Millisecond):
		}
	}
	c.stop()
	return nil, "", fmt.Errorf("%s not ready within %v; log: %s", name, readyTimeout, c.logTail())
}

// findReadyLine scans the child's log for its ready line.
func (c *child) findReadyLine() (string, bool) {
	f, err := os.Open(c.logPath)
	if err != nil {
		return "", false
	}
	defer f.Close()
	scanner := bufio.NewScanner(f)
	for scanner.Scan() {
		if rest, ok := strings.CutPrefix(scanner.Text(), readyPrefix); ok {
			return rest, true
		}
	}
	return "", false
}

// alive reports whether the process still runs.
func (c *child) alive() bool {
	select {
	case <-c.exited:
		return false
	default:
		return true
	}
}

// stop sends SIGTERM, then SIGKILL after stopTimeout, and waits.
func (c *child) stop() {
	if c.alive() {
		_ = c.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-c.exited:
		case <-time.After(stopTimeout):
			_ = c.cmd.Process.Kill()
			<-c.exited
		}
	}
	c.log.Close()
}

// logTail is the end of the child's log, on one line.
func (c *child) logTail() string {
	f, err := os.Open(c.logPath)
	if err != nil {
		return "(no log)"
	}
	defer f.Close()
	if info, err := f.Stat(); err == nil && info.Size() > logTailBytesMax {
		_, _ = f.Seek(info.Size()-logTailBytesMax, io.SeekStart)
	}
	tail, _ := io.ReadAll(f)
	return strings.Join(strings.Fields(string(tail)), " ")
}

// whileAlive is a context that ends when any of children exits, so that
// waiting for a dead system to become ready fails at once.
func whileAlive(ctx context.Context, children ...*child) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancelCause(ctx)
	for _, c := range children {
		go func() {
			select {
			case <-c.exited:
				cancel(fmt.Errorf("%s exited: %v; log: %s", c.name, c.err, c.logTail()))
			case <-ctx.Done():
			}
		}()
	}
	return ctx, func() { cancel(context.Canceled) }
}

// freePort asks the kernel for a free loopback port.
func freePort() (int, error) {
	listener, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer listener.Close()
	return listener.Addr().(*net.TCPAddr).Port, nil
}

// portRangeAttempts bounds the search for consecutive free ports.
const portRangeAttempts = 100

// freePortRange finds count consecutive free loopback ports, for `sluice
// cluster`, which numbers its ports from one base.
func freePortRange(count int) (int, error) {
	for range portRangeAttempts {
		base, err := freePort()
		if err != nil {
			return 0, err
		}
		if base+count > 65535 {
			continue
		}
		free := true
		for port := base; port < base+count && free; port++ {
			listener, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", port))
			if err != nil {
				free = false
				continue
			}
			listener.Close()
		}
		if free {
			return base, nil
		}
	}
	return 0, errors.New("no range of free loopback ports found")
}
