package log

import (
	"io/fs"
	"path"
	"strconv"
	"strings"
)

// File names inside a partition directory. Segment files are named by their
// base offset in 20 digits, as Kafka's are, so that sorting names sorts
// segments.
const (
	segmentSuffix     = ".log"
	offsetIndexSuffix = ".index"
	timeIndexSuffix   = ".timeindex"
	temporarySuffix   = ".tmp"

	// A segment rewritten by compaction is written as <base>.log.cleaned,
	// renamed to <base>.log.swap once it is durable (the swap is then
	// committed: recovery finishes it), and finally renamed over
	// <base>.log, as Kafka's log cleaner does (see compaction_swap.go).
	cleanedSuffix = segmentSuffix + ".cleaned"
	swapSuffix    = segmentSuffix + ".swap"

	// checkpointName holds the log start offset, the recovery point and the
	// leader epoch entries, in one file so that they change together
	// atomically (see checkpoint.go).
	checkpointName = "log.checkpoint"

	baseOffsetDigits = 20
)

// baseName is the 20-digit stem shared by a segment's three files.
func baseName(baseOffset int64) string {
	digits := strconv.FormatInt(baseOffset, 10)
	return strings.Repeat("0", max(baseOffsetDigits-len(digits), 0)) + digits
}

func segmentPath(dir string, baseOffset int64) string {
	return segmentFilePath(dir, baseOffset, segmentSuffix)
}

func cleanedPath(dir string, baseOffset int64) string {
	return segmentFilePath(dir, baseOffset, cleanedSuffix)
}

func swapPath(dir string, baseOffset int64) string {
	return segmentFilePath(dir, baseOffset, swapSuffix)
}

func offsetIndexPath(dir string, baseOffset int64) string {
	return segmentFilePath(dir, baseOffset, offsetIndexSuffix)
}

func timeIndexPath(dir string, baseOffset int64) string {
	return segmentFilePath(dir, baseOffset, timeIndexSuffix)
}

// segmentFilePath is path.Join(dir, baseName(baseOffset)+suffix), built
// in one allocation: segments roll, sync and go often enough that the five
// allocations of the plain form (the digits, the padding, the name, and
// path.Join's buffer and result) showed in the simulator's profile.
func segmentFilePath(dir string, baseOffset int64, suffix string) string {
	var digitsBuf [baseOffsetDigits]byte
	digits := strconv.AppendInt(digitsBuf[:0], baseOffset, 10)
	var b strings.Builder
	b.Grow(len(dir) + 1 + max(baseOffsetDigits, len(digits)) + len(suffix))
	b.WriteString(dir)
	b.WriteByte('/')
	for range baseOffsetDigits - len(digits) {
		b.WriteByte('0')
	}
	b.Write(digits)
	b.WriteString(suffix)
	if joined := b.String(); isValidDir(dir) || isJoinedClean(joined, dir) {
		return joined
	}
	return path.Join(dir, baseName(baseOffset)+suffix)
}

// isValidDir reports whether dir is a valid fs path other than ".", as
// Open demands of a log's directory. Such a path is clean (no empty, "."
// or ".." element, no slash at either end), and so is what joins it to a
// file name of one element: a cheaper test than cleaning the joined path,
// which showed in the profile.
func isValidDir(dir string) bool { return dir != "." && fs.ValidPath(dir) }

// joinPath is path.Join(dir, name), without path.Join's extra buffer when
// dir is already clean (as a log's directory is).
func joinPath(dir, name string) string {
	if joined := dir + "/" + name; isJoinedClean(joined, dir) {
		return joined
	}
	return path.Join(dir, name)
}

// isJoinedClean reports whether joined, which is dir+"/"+name, is what
// path.Join(dir, name) returns: path.Join cleans dir+"/"+name when dir is
// not empty, and cleaning a clean path changes (and allocates) nothing.
func isJoinedClean(joined, dir string) bool {
	return dir != "" && path.Clean(joined) == joined
}

// parseBaseName reads the base offset from a file name with the given
// suffix, reporting false for any other name.
func parseBaseName(name, suffix string) (int64, bool) {
	stem, found := strings.CutSuffix(name, suffix)
	if !found || len(stem) != baseOffsetDigits {
		return 0, false
	}
	for _, c := range stem {
		if c < '0' || c > '9' {
			return 0, false
		}
	}
	offset, err := strconv.ParseInt(stem, 10, 64)
	if err != nil {
		return 0, false
	}
	return offset, true
}
