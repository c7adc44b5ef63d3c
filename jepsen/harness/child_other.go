//go:build !linux

package harness

import "os/exec"

// dieWithParent has no portable equivalent outside Linux.
func dieWithParent(cmd *exec.Cmd) {}
