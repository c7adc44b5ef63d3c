package fstest

import (
	"testing"

	"sluice/core"
)

// Harness is one fresh filesystem under test.
type Harness struct {
	// FS is the filesystem, empty when the harness is made.
	FS core.FS

	// Drain runs pending callbacks (sync completions) on the caller's
	// goroutine, as the node's loop would, until none are pending. The
	// suite calls it wherever a real node would return to its loop.
	Drain func()
}

// check is one behaviour of the contract, run against a fresh harness.
type check struct {
	name string
	run  func(t *testing.T, h Harness)
}

// checks lists every behaviour the suite pins down, in reading order.
var checks = []check{
	{"OpenMissingFile", checkOpenMissingFile},
	{"CreateThenReopen", checkCreateThenReopen},
	{"CreateKeepsExistingContent", checkCreateKeepsExistingContent},
	{"OpenDirectoryAsFile", checkOpenDirectoryAsFile},
	{"WriteAtExtendsOverwritesAndLeavesHoles", checkWriteAtExtendsOverwritesAndLeavesHoles},
	{"ReadAtEndOfFile", checkReadAtEndOfFile},
	{"NegativeOffsets", checkNegativeOffsets},
	{"TruncateShrinksAndExtends", checkTruncateShrinksAndExtends},
	{"HandlesShareOneFile", checkHandlesShareOneFile},
	{"SyncCallsBackOnceLater", checkSyncCallsBackOnceLater},
	{"SyncDirCallsBackOnceLater", checkSyncDirCallsBackOnceLater},
	{"SyncDirMissing", checkSyncDirMissing},
	{"ReadDirSorted", checkReadDirSorted},
	{"ReadDirErrors", checkReadDirErrors},
	{"MkdirAllNested", checkMkdirAllNested},
	{"MkdirAllThroughFile", checkMkdirAllThroughFile},
	{"RemoveFileAndEmptyDirectory", checkRemoveFileAndEmptyDirectory},
	{"RemoveNonEmptyDirectory", checkRemoveNonEmptyDirectory},
	{"RemoveMissing", checkRemoveMissing},
	{"RemovedOpenFileStillWorks", checkRemovedOpenFileStillWorks},
	{"RenameReplacesTarget", checkRenameReplacesTarget},
	{"RenameAcrossDirectories", checkRenameAcrossDirectories},
	{"RenameDirectory", checkRenameDirectory},
	{"RenameMissing", checkRenameMissing},
	{"ClosedFileErrors", checkClosedFileErrors},
	{"NamesInSubdirectories", checkNamesInSubdirectories},
	{"InvalidNames", checkInvalidNames},
}

// Run checks the core.FS contract, one subtest per behaviour, each against
// a fresh harness from newHarness. Call it from the implementation's test:
//
//	func TestConformance(t *testing.T) {
//		fstest.Run(t, func(t *testing.T) fstest.Harness { ... })
//	}
func Run(t *testing.T, newHarness func(t *testing.T) Harness) {
	t.Helper()
	for _, c := range checks {
		t.Run(c.name, func(t *testing.T) {
			h := newHarness(t)
			if h.FS == nil || h.Drain == nil {
				t.Fatal("fstest: harness needs both FS and Drain")
			}
			c.run(t, h)
			// Leave nothing running past the subtest.
			h.Drain()
		})
	}
}
