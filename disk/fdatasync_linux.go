package disk

import "golang.org/x/sys/unix"

// fdatasync flushes a file's data and size, skipping metadata such as
// timestamps that reads do not need.
func fdatasync(descriptor int) error { return unix.Fdatasync(descriptor) }
