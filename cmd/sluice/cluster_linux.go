package main

import "syscall"

// childProcessAttributes puts each node in its own process group, so that
// a Ctrl-C in the terminal reaches only `sluice cluster`, which forwards
// it (once) to every node, and has the kernel stop a node whose parent
// died without stopping it.
func childProcessAttributes() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
}
