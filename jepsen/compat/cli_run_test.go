package compat

import (
	"bytes"
	"context"
	"errors"
	"os/exec"
	"regexp"
	"testing"
)

// cliRun is one run of the binary: what it printed and its exit status.
type cliRun struct {
	args           []string
	stdout, stderr string
	code           int
}

// runSluice runs the binary with args to its end, whatever its status.
func runSluice(ctx context.Context, t *testing.T, binary string, args ...string) cliRun {
	t.Helper()
	return runSluiceWithInput(ctx, t, nil, binary, args...)
}

// runSluiceWithInput is runSluice with stdin.
func runSluiceWithInput(ctx context.Context, t *testing.T, stdin []byte, binary string, args ...string) cliRun {
	t.Helper()
	cmd := exec.CommandContext(ctx, binary, args...)
	cmd.Stdin = bytes.NewReader(stdin)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	run := cliRun{args: args, stdout: stdout.String(), stderr: stderr.String()}
	var exit *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &exit) && exit.Exited():
		run.code = exit.ExitCode()
	default:
		t.Fatalf("sluice %s: %v (context: %v)\nstderr:\n%s", describeArgs(args), err, ctx.Err(), run.stderr)
	}
	return run
}

// expect fails the test unless the run exited with code and its stdout
// and stderr match the regular expressions given.
func (r cliRun) expect(t *testing.T, code int, stdout, stderr string) {
	t.Helper()
	t.Logf("sluice %s: exit %d\n%s%s", describeArgs(r.args), r.code, r.stdout, r.stderr)
	if r.code != code || !regexp.MustCompile(stdout).MatchString(r.stdout) || !regexp.MustCompile(stderr).MatchString(r.stderr) {
		t.Fatalf("sluice %s exited %d (want %d)\nstdout:\n%s\nwant it to match %q\nstderr:\n%s\nwant it to match %q",
			describeArgs(r.args), r.code, code, r.stdout, stdout, r.stderr, stderr)
	}
}
