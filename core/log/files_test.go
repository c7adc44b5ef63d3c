package log

import (
	"path"
	"testing"

	"pgregory.net/rapid"
)

// The one-allocation path builders name exactly the files path.Join names,
// whatever the directory: clean or not, relative, rooted, empty.
func TestPathBuildersAgreeWithPathJoin(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		dir := rapid.SampledFrom([]string{
			"", "/", ".", "..", "data", "/data", "/data/orders-0", "data/orders-0",
			"/data/", "data//orders-0", "./data", "/data/../orders-0", "a/./b",
		}).Draw(t, "dir")
		offset := rapid.OneOf(rapid.Int64Range(-20, 20), rapid.Int64()).Draw(t, "offset")
		suffix := rapid.SampledFrom([]string{segmentSuffix, offsetIndexSuffix, timeIndexSuffix, cleanedSuffix, swapSuffix}).Draw(t, "suffix")
		if got, want := segmentFilePath(dir, offset, suffix), path.Join(dir, baseName(offset)+suffix); got != want {
			t.Fatalf("segmentFilePath(%q, %d, %q) = %q, path.Join gives %q", dir, offset, suffix, got, want)
		}
		name := rapid.SampledFrom([]string{checkpointName, checkpointName + temporarySuffix, "x", "../x"}).Draw(t, "name")
		if got, want := joinPath(dir, name), path.Join(dir, name); got != want {
			t.Fatalf("joinPath(%q, %q) = %q, path.Join gives %q", dir, name, got, want)
		}
	})
}
