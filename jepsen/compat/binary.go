package compat

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// buildTimeout bounds one `go build` of the broker: a cold build of the
// whole module on a small machine takes well under a minute.
const buildTimeout = 5 * time.Minute

// BinaryEnvironment names a prebuilt sluice binary to use instead of
// building one; empty or unset means build from the module's source.
const BinaryEnvironment = "SLUICE_BINARY"

// build is the one build of the process: every test shares its binary.
var build struct {
	once sync.Once
	dir  string
	path string
	err  error
}

// BuildBinary returns the path of a sluice binary built from this module's
// ./cmd/sluice, building it on the first call of the process. A failed
// build fails every test that asks, each with the compiler's output.
func BuildBinary(t testing.TB) string {
	t.Helper()
	build.once.Do(func() {
		if prebuilt := os.Getenv(BinaryEnvironment); prebuilt != "" {
			build.path, build.err = filepath.Abs(prebuilt)
			return
		}
		build.dir, build.path, build.err = buildBinary()
	})
	if build.err != nil {
		t.Fatalf("building sluice: %v", build.err)
	}
	return build.path
}

// RemoveBinary deletes what BuildBinary built. TestMain calls it after
// the tests, since the binary outlives any one test's temporary directory.
func RemoveBinary() {
	if build.dir != "" {
		_ = os.RemoveAll(build.dir)
	}
}

func buildBinary() (dir, path string, err error) {
	root, err := ModuleRoot()
	if err != nil {
		return "", "", err
	}
	dir, err = os.MkdirTemp("", "sluice-compat-build-")
	if err != nil {
		return "", "", err
	}
	path = filepath.Join(dir, "sluice")
	ctx, cancel := context.WithTimeout(context.Background(), buildTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, goTool(), "build", "-o", path, "./cmd/sluice")
	cmd.Dir = root
	output, err := cmd.CombinedOutput()
	if err != nil {
		_ = os.RemoveAll(dir)
		return "", "", fmt.Errorf("go build ./cmd/sluice in %s: %v\n%s", root, err, output)
	}
	return dir, path, nil
}

// goTool is the go command that runs these tests when it can be found
// (GOROOT/bin/go), else whatever `go` the PATH names.
func goTool() string {
	if root := os.Getenv("GOROOT"); root != "" {
		candidate := filepath.Join(root, "bin", "go")
		if _, err := os.Stat(candidate); err == nil {
			return candidate
		}
	}
	return "go"
}

// ModuleRoot is the directory holding the module's go.mod, found by
// walking up from the working directory (a test runs in its package's).
func ModuleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		} else if !errors.Is(err, os.ErrNotExist) {
			return "", err
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod in the working directory or above it")
		}
		dir = parent
	}
}
