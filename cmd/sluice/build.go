package main

import (
	"fmt"
	"os"
	"runtime/debug"
)

// build is what this binary was built from, as the Go toolchain recorded
// it: the module version, and, for a build inside a git checkout, the
// commit and whether the tree had uncommitted changes. A seed replays the
// same run only on the same code, so a simulator failure names it.
type build struct {
	version   string
	goVersion string
	revision  string // empty when the build recorded none (go run, go test)
	modified  bool
}

// thisBuild reads the binary's build information.
func thisBuild() build {
	b := build{version: "(devel)"}
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return b
	}
	b.version, b.goVersion = info.Main.Version, info.GoVersion
	for _, setting := range info.Settings {
		switch setting.Key {
		case "vcs.revision":
			b.revision = setting.Value
		case "vcs.modified":
			b.modified = setting.Value == "true"
		}
	}
	return b
}

// revisionText is the commit, shortened, with "+modified" for a dirty
// tree, or "unknown" when the build recorded none.
func (b build) revisionText() string {
	if b.revision == "" {
		return "unknown"
	}
	text := b.revision[:min(12, len(b.revision))]
	if b.modified {
		text += "+modified"
	}
	return text
}

// knownRevision is revisionText, or empty when the build recorded none.
func (b build) knownRevision() string {
	if b.revision == "" {
		return ""
	}
	return b.revisionText()
}

func init() {
	register("version", "print what this binary was built from", func([]string) int {
		b := thisBuild()
		fmt.Fprintf(os.Stdout, "sluice %s revision %s %s\n", b.version, b.revisionText(), b.goVersion)
		return 0
	})
}
