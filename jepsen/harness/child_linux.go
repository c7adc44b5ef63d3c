package harness

import (
	"os/exec"
	"syscall"
)

// dieWithParent makes the kernel SIGKILL a node if the harness dies first
// (a crash, a test timeout), so no node outlives its run holding ports.
func dieWithParent(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
