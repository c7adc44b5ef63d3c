// Package simdisk is the simulated disk: core.FS in memory, with the page
// cache, fsync and crash behaviour of a Linux filesystem made explicit and
// driven by the simulation's seed.
//
// # The model
//
// Every file and directory is an inode. A file has a current image (what
// reads see: every write and truncate) and a durable image (what survives a
// crash), plus the ordered list of operations (write offset+bytes, truncate
// size) made since its last sync. File.Sync captures the end of that list;
// after a latency drawn from Faults it completes, applies the operations it
// covers to the durable image, and calls done. Completions for one file or
// directory run in the order they were issued. The completion is a kernel
// event owned by the machine's process, so a crash drops it.
//
// The namespace works the same way. Each namespace operation (create,
// remove, rename, mkdir) changes one or two directory entries and touches
// their directories (rename touches two). It becomes durable once, for every
// directory it touches, a SyncDir that began after it has completed; then its
// entry changes are applied to those directories' durable entries. When an
// older operation becomes durable after a newer one that changed the same
// entry, the newer one wins, as it would on the media. A file whose
// directory entry never became durable vanishes at a crash, even if its data
// was synced; so does everything below a directory whose own entry did.
// Directories synced unevenly can leave a file with two durable names,
// which survive as hard links (see rebuildNamespace in crash.go).
//
// # Faults this injects
//
//   - Loss of unsynced writes: Crash keeps durable images only.
//   - Torn writes (Faults.TornWrite): at a crash, a random prefix of a file's
//     pending operations reaches the media too, the last one possibly cut
//     short. The rest of a torn write's range is then, at random, absent
//     (the file ends there) or zeros (the size was updated but the data
//     blocks never written: what ext4's delayed allocation leaves behind,
//     and what makes a recovery that skips CRC checks serve garbage). The
//     namespace likewise may keep a prefix of its pending operations.
//   - Failed fsync (Faults.SyncFailure): done gets an error and the
//     operations the sync covered are dropped without reaching the durable
//     image, as Linux marks the pages clean after a failed writeback. The
//     data stays readable until the next crash, then is gone.
//   - Read corruption (Faults.ReadCorruption): one bit flipped in what a
//     ReadAt returns; the media is fine, so the next read is clean.
//   - Full disk (Faults.CapacityBytes): a write that would push the sum of
//     file sizes past capacity writes what fits and returns an error wrapping
//     core.ErrDiskFull.
//   - Slow disk (Faults.SyncLatencyMin/Max): each sync draws its latency.
//
// Faults can change at run time (SetFaults), for the nemesis's slow-disk and
// full-disk windows; Stats counts what was injected, for coverage reports.
//
// # What it must never do
//
// It runs inside the simulator's single goroutine and must stay
// deterministic: all randomness comes from the rng it is given, directories
// and inodes are visited in sorted order, and no map order reaches a result.
// It never calls a callback inside the call that registered it.
//
// Start reading with Disk and New (disk.go), then the namespace
// (namespace.go), files (file.go), syncs (sync.go) and Crash (crash.go).
package simdisk
