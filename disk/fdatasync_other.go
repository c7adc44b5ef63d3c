//go:build !linux

package disk

import "golang.org/x/sys/unix"

// fdatasync falls back to fsync where the system has no fdatasync. (On
// macOS neither reaches the platter; production targets Linux.)
func fdatasync(descriptor int) error { return unix.Fsync(descriptor) }
