package harness

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"syscall"
)

// process is one run of the sluice binary as a node. exited is closed once
// the process is gone; state then says how it ended.
type process struct {
	cmd    *exec.Cmd
	log    *os.File
	exited chan struct{}
	state  *os.ProcessState
	err    error
	// expected is set before the harness signals the process to end, so
	// that an exit it did not ask for stands out.
	expected bool
}

// startProcess runs binary with args, appending its output to logPath.
// onExit is called (on another goroutine) once it has exited.
func startProcess(binary string, args []string, logPath string, onExit func(*process)) (*process, error) {
	log, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("harness: node log: %w", err)
	}
	cmd := exec.Command(binary, args...)
	cmd.Stdout = log
	cmd.Stderr = log
	dieWithParent(cmd)
	if err := cmd.Start(); err != nil {
		log.Close()
		return nil, fmt.Errorf("harness: starting %s: %w", binary, err)
	}
	p := &process{cmd: cmd, log: log, exited: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		p.state = cmd.ProcessState
		log.Close()
		close(p.exited)
		if onExit != nil {
			onExit(p)
		}
	}()
	return p, nil
}

func (p *process) pid() int { return p.cmd.Process.Pid }

func (p *process) alive() bool {
	select {
	case <-p.exited:
		return false
	default:
		return true
	}
}

func (p *process) signal(sig syscall.Signal) error {
	err := p.cmd.Process.Signal(sig)
	if errors.Is(err, os.ErrProcessDone) {
		return nil
	}
	return err
}

// description says how a finished process ended.
func (p *process) description() string {
	if p.state == nil {
		return fmt.Sprintf("wait failed: %v", p.err)
	}
	return p.state.String()
}

// logTail is the last bytes of the file at path, at most n.
func logTail(path string, n int64) string {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Sprintf("(no log: %v)", err)
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return fmt.Sprintf("(log unreadable: %v)", err)
	}
	offset := max(info.Size()-n, 0)
	tail := make([]byte, info.Size()-offset)
	if _, err := f.ReadAt(tail, offset); err != nil && !errors.Is(err, io.EOF) {
		return fmt.Sprintf("(log unreadable: %v)", err)
	}
	return string(tail)
}
