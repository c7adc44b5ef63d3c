package compat

import (
	"os/exec"
	"syscall"
)

// dieWithParent makes the kernel SIGKILL the broker if the test process
// dies first (a timeout, a crash), so no broker outlives its test holding
// a port and a data directory.
func dieWithParent(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
