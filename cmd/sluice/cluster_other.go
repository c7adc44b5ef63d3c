//go:build !linux

package main

import "syscall"

// childProcessAttributes is the default elsewhere: a Ctrl-C in the
// terminal then reaches the nodes directly as well as through
// `sluice cluster`, which is harmless (a node stops on the first).
func childProcessAttributes() *syscall.SysProcAttr { return nil }
