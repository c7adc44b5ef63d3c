package simdisk

import "testing"

// TestRegrownBytesReadAsZeros checks that bytes cut off by a truncate and
// regrown within the image's capacity read as zeros, never as what was
// there, whether a truncate or a write past the end regrows them.
func TestRegrownBytesReadAsZeros(t *testing.T) {
	image := writeInto(nil, 0, []byte("abcdefgh"))
	image = resize(image, 2) // "cdefgh" stay in the array, past the end
	image = writeInto(image, 4, []byte("XY"))
	if got, want := string(image), "ab\x00\x00XY"; got != want {
		t.Fatalf("write past a hole: %q, want %q", got, want)
	}
	image = resize(image, 1)
	image = writeInto(image, 0, []byte("AB")) // straddles the end: no hole
	image = resize(image, 5)
	if got, want := string(image), "AB\x00\x00\x00"; got != want {
		t.Fatalf("truncate and regrow: %q, want %q", got, want)
	}
}
