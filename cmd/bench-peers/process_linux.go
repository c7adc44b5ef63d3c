package main

import "syscall"

// childProcessAttributes has the kernel stop a child whose parent died
// without stopping it, so an interrupted run leaves no servers behind.
func childProcessAttributes() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
