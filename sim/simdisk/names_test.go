package simdisk

import (
	"io/fs"
	"strings"
	"testing"
)

// TestCheckNameIsValidPath checks checkName against fs.ValidPath, whose
// rules it must keep, and its last slash against strings.LastIndexByte.
func TestCheckNameIsValidPath(t *testing.T) {
	names := []string{
		"", ".", "..", "...", "/", "//", "a", "a/", "/a", "a//b", "a/b", "a/b/c",
		"./a", "a/.", "a/..", "a/./b", "a/../b", "../a", ".a", "a.", "a/.b/c..",
		"topic-0/00000000000000000000.log", "é/ü", "a/\xff", "\xffa", "a/b\x00c",
	}
	for _, name := range names {
		lastSlash, valid := checkName(name)
		if want := fs.ValidPath(name); valid != want {
			t.Errorf("checkName(%q) valid = %v, fs.ValidPath says %v", name, valid, want)
			continue
		}
		if want := strings.LastIndexByte(name, '/'); valid && name != "." && lastSlash != want {
			t.Errorf("checkName(%q) last slash at %d, want %d", name, lastSlash, want)
		}
	}
}
