//go:build !linux

package compat

import "os/exec"

// dieWithParent has no portable equivalent outside Linux: a broker there
// can outlive a test process that dies without running its cleanups.
func dieWithParent(cmd *exec.Cmd) {}
