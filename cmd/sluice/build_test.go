package main

import "testing"

func TestRevisionTextNamesTheCommitAndADirtyTree(t *testing.T) {
	for _, c := range []struct {
		build       build
		text, known string
	}{
		{build{revision: "fbd50bf5494c1a2b3c4d5e6f708192a3b4c5d6e7"}, "fbd50bf5494c", "fbd50bf5494c"},
		{build{revision: "fbd50bf5494c1a2b3c4d5e6f708192a3b4c5d6e7", modified: true}, "fbd50bf5494c+modified", "fbd50bf5494c+modified"},
		{build{revision: "abc"}, "abc", "abc"},
		{build{}, "unknown", ""},
	} {
		if got := c.build.revisionText(); got != c.text {
			t.Errorf("%+v: revisionText %q, want %q", c.build, got, c.text)
		}
		if got := c.build.knownRevision(); got != c.known {
			t.Errorf("%+v: knownRevision %q, want %q", c.build, got, c.known)
		}
	}
}
