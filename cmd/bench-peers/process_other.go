//go:build !linux

package main

import "syscall"

// childProcessAttributes: outside Linux there is no parent-death signal;
// an interrupted run may leave servers to stop by hand.
func childProcessAttributes() *syscall.SysProcAttr { return &syscall.SysProcAttr{} }
