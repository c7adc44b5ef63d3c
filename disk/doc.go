// Package disk is the real disk: core.FS over a directory of OS files, with
// fdatasync and directory fsync run off the node's loop.
//
// It owns the translation from core's disk contract to POSIX: slash names
// relative to one root (names that would leave it are refused), positioned
// reads and writes (pread/pwrite, so a handle has no shared offset), sizes
// kept in memory so Size costs no syscall, ENOSPC and EDQUOT reported as
// core.ErrDiskFull, and syncs executed by a fixed pool of worker goroutines
// whose completions are posted back to the loop.
//
// It must never call a completion on a worker goroutine: every done callback
// goes through post, which delivers it to the node's loop. It never retries a
// failed fsync either: after a failure the kernel may have dropped the dirty
// pages, so the error goes to core, which halts the node (PostgreSQL's
// "fsyncgate" lesson).
//
// Start with New and FS (fs.go), then File (file.go) and the sync workers
// (sync_workers.go).
package disk
