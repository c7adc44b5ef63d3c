// Package fstest is the conformance suite for core.FS: one set of checks that
// the real disk (disk/) and the simulated disk (sim/simdisk) both pass, so the
// core code that runs on either sees the same filesystem.
//
// It owns the executable form of core/disk.go's contract: opening and
// creating, positioned reads and writes with holes, truncation, sizes, sync
// callbacks that run exactly once and never inside the call, sorted directory
// listings, nested directories, removal and atomic rename, and errors for
// closed files and invalid names.
//
// It must never touch the operating system itself (it lives under core/ and
// obeys core's rules); it only drives the FS it is handed. It checks what
// every implementation promises without a crash; durability across crashes
// is tested by each implementation on its own.
//
// Start with Run and Harness (fstest.go), which also lists every check. Each
// check is one function named after the behaviour it pins down: files in
// checks_files.go, sync callbacks in checks_sync.go, directories and names in
// checks_namespace.go; helpers.go holds the shared assertions.
package fstest
