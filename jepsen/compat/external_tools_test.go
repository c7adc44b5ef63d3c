package compat

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"testing"
)

// requireClientsEnvironment, set to 1, turns a missing outside client
// (kcat, node with kafkajs) from a skip into a failure. .ci/run sets it
// after installing them, so CI can never pass by skipping.
const requireClientsEnvironment = "SLUICE_REQUIRE_CLIENTS"

// outsideToolOutputMax bounds what a failure message quotes of an
// outside program's stderr.
const outsideToolOutputMax = 4 << 10

// availableRow is the matrix row saying whether an outside client was
// there to test.
const availableRow = "client installed"

// requireOutsideTool finds program on the PATH. When it is missing the
// test skips, saying how to install it, or fails if clients are required.
// Either way the matrix shows it in client's column.
func requireOutsideTool(t *testing.T, client, program, install string) string {
	t.Helper()
	path, err := exec.LookPath(program)
	if err != nil {
		requireOutside(t, client, fmt.Sprintf("%s not found (%v); install it with: %s", program, err, install))
	}
	return path
}

// requireOutside fails or skips t because something client needs is
// missing, as requireClientsEnvironment says.
func requireOutside(t *testing.T, client, message string) {
	t.Helper()
	if os.Getenv(requireClientsEnvironment) == "1" {
		matrix.record(client, availableRow, outcomeFail)
		t.Fatalf("%s, and %s=1 requires it", message, requireClientsEnvironment)
	}
	matrix.record(client, availableRow, outcomeSkip)
	t.Skip(message)
}

// runOutsideTool runs program with args and stdin within clientTimeout
// and returns its stdout; a non-zero exit, or a timeout, fails t with the
// end of its stderr.
func runOutsideTool(t testing.TB, stdin []byte, program string, args ...string) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), clientTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, program, args...)
	cmd.Stdin = bytes.NewReader(stdin)
	var stdout, stderr bytes.Buffer
	cmd.Stdout = &stdout
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s %s: %v (context: %v)\nstderr (end):\n%s", program, describeArgs(args), err, ctx.Err(), tail(stderr.Bytes(), outsideToolOutputMax))
	}
	return stdout.Bytes()
}

// describeArgs quotes args for a failure message, shortening long ones.
func describeArgs(args []string) string {
	var b bytes.Buffer
	for i, arg := range args {
		if i > 0 {
			b.WriteByte(' ')
		}
		if len(arg) > 80 {
			arg = arg[:80] + "…"
		}
		fmt.Fprintf(&b, "%q", arg)
	}
	return b.String()
}

// tail is the last at most n bytes of b.
func tail(b []byte, n int) []byte {
	if len(b) > n {
		return b[len(b)-n:]
	}
	return b
}
