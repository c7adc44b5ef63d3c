package compat

import (
	"bytes"
	"context"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestSluiceGroupDescribesResetsAndDeletes walks `sluice group` through what
// kafka-consumer-groups.sh is used for. A group consumes part of a topic;
// list shows it Empty, describe shows each partition's committed offset,
// end and lag, and the lag grows with a produce. reset-offsets prints its
// plan and changes nothing without --execute; with it, the next run of the
// group starts where the reset put it. While a consumer is in the group,
// reset-offsets and delete refuse and describe names the members, those
// owning nothing too; once it
// has left (having consumed from where the last reset put the group),
// delete removes the group and describe says it does not exist.
func TestSluiceGroupDescribesResetsAndDeletes(t *testing.T) {
	t.Parallel()
	broker := StartBroker(t, Options{})
	binary := BuildBinary(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*clientTimeout)
	defer cancel()
	at := []string{"--brokers", broker.Addr()}
	// sluice runs the binary against the broker: "--brokers" goes after the
	// command (and the action, for group and topic).
	sluice := func(args ...string) cliRun {
		words := 1
		if args[0] == "group" || args[0] == "topic" {
			words = 2
		}
		return runSluice(ctx, t, binary, slices.Concat(args[:words], at, args[words:])...)
	}
	produce := func(partition string, lines string) {
		runSluiceWithInput(ctx, t, []byte(lines), binary, "produce", "--brokers", broker.Addr(), "--topic", "ledger", "--partition", partition).
			expect(t, 0, "^$", "^produced ")
	}
	consume := func(count string) []string {
		run := sluice("consume", "--topic", "ledger", "--group", "audit", "--count", count)
		run.expect(t, 0, "", "")
		values := strings.Fields(run.stdout)
		slices.Sort(values)
		return values
	}

	sluice("topic", "create", "--partitions", "2", "ledger").expect(t, 0, "", "")
	produce("0", "a0\na1\na2\n")
	produce("1", "b0\nb1\n")
	if got, want := consume("5"), []string{"a0", "a1", "a2", "b0", "b1"}; !slices.Equal(got, want) {
		t.Fatalf("the group consumed %q, want %q", got, want)
	}
	sluice("group", "list").expect(t, 0, `(?m)^audit +Empty +consumer$`, "^$")
	sluice("group", "describe", "audit").expect(t, 0,
		`(?m)^group audit  state Empty .* members 0\n.*CURRENT-OFFSET +LOG-END-OFFSET +LAG.*\nledger +0 +3 +3 +0 +- +- +-\nledger +1 +2 +2 +0 +- +- +-\n$`, "^$")
	produce("0", "a3\na4\n")
	sluice("group", "describe", "audit").expect(t, 0, `(?m)^ledger +0 +3 +5 +2 `, "^$")

	sluice("group", "reset-offsets", "--to-earliest", "audit").expect(t, 0,
		`(?m)^audit +ledger +0 +3 +0\naudit +ledger +1 +2 +0\n$`, "^dry run: nothing committed")
	sluice("group", "describe", "audit").expect(t, 0, `(?m)^ledger +0 +3 +5 +2 `, "^$")
	sluice("group", "reset-offsets", "--to-offset", "1", "--topic", "ledger", "--execute", "audit").expect(t, 0,
		`(?m)^audit +ledger +0 +3 +1\naudit +ledger +1 +2 +1\n$`, "^committed 2 offsets for group audit\n$")
	if got, want := consume("5"), []string{"a1", "a2", "a3", "a4", "b1"}; !slices.Equal(got, want) {
		t.Fatalf("after the reset the group consumed %q, want %q", got, want)
	}
	sluice("group", "reset-offsets", "--shift-by", "-9", "--execute", "audit").expect(t, 0,
		`(?m)^audit +ledger +0 +5 +0\naudit +ledger +1 +2 +0\n$`, "") // clamped to the log start

	member := exec.CommandContext(ctx, binary, "consume", "--brokers", broker.Addr(), "--topic", "ledger", "--group", "audit")
	var memberOut bytes.Buffer
	member.Stdout = &memberOut
	if err := member.Start(); err != nil {
		t.Fatal(err)
	}
	// It reads all seven records and commits them.
	waitForGroup(t, ctx, sluice, `(?m)^group audit  state Stable .* members 1\n.*\n`+
		`ledger +0 +5 +5 +0 +sluice-consume-\S+ +/127\.0\.0\.1 +sluice-consume\n`+
		`ledger +1 +2 +2 +0 +sluice-consume-\S+ +/127\.0\.0\.1 +sluice-consume\n$`)
	// Two more members for two partitions: one of the three owns nothing,
	// and describe lists it too, as Kafka's tool does.
	// Until the cooperative rebalance has handed the second partition over,
	// a describe may show it owned by no one; wait for the end.
	var extras []*exec.Cmd
	for range 2 {
		extra := exec.CommandContext(ctx, binary, "consume", "--brokers", broker.Addr(), "--topic", "ledger", "--group", "audit")
		if err := extra.Start(); err != nil {
			t.Fatal(err)
		}
		extras = append(extras, extra)
	}
	waitForGroup(t, ctx, sluice, `(?m)^group audit  state Stable .* members 3\n.*\n`+
		`ledger +0 .* sluice-consume-\S+ +/127\.0\.0\.1 +sluice-consume\n`+
		`ledger +1 .* sluice-consume-\S+ +/127\.0\.0\.1 +sluice-consume\n`+
		`- +- +- +- +- +sluice-consume-\S+ +/127\.0\.0\.1 +sluice-consume\n$`)
	sluice("group", "reset-offsets", "--to-earliest", "--execute", "audit").
		expect(t, 1, "^$", `^sluice group reset-offsets: audit is Stable with 3 members: offsets can only be reset while the group has none`)
	sluice("group", "delete", "audit").expect(t, 1, "^$", "^audit: NON_EMPTY_GROUP")
	for _, extra := range extras {
		if err := extra.Process.Signal(syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		if err := extra.Wait(); err != nil {
			t.Fatalf("a member exited: %v", err)
		}
	}
	if err := member.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := member.Wait(); err != nil {
		t.Fatalf("the member exited: %v", err)
	}
	consumed := strings.Fields(memberOut.String())
	slices.Sort(consumed)
	if want := []string{"a0", "a1", "a2", "a3", "a4", "b0", "b1"}; !slices.Equal(consumed, want) {
		t.Fatalf("after the reset to the log start the member consumed %q, want %q", consumed, want)
	}
	waitForGroup(t, ctx, sluice, `(?m)^group audit  state Empty `)

	sluice("group", "delete", "audit").expect(t, 0, "^deleted group audit\n$", "^$")
	if run := sluice("group", "list"); strings.Contains(run.stdout, "audit") {
		t.Fatalf("group list after the delete:\n%s", run.stdout)
	}
	sluice("group", "describe", "audit").expect(t, 1, "^$", "^audit: group does not exist")
}

// waitForGroup runs `sluice group describe audit` until its output matches.
func waitForGroup(t *testing.T, ctx context.Context, sluice func(...string) cliRun, pattern string) {
	t.Helper()
	re := regexp.MustCompile(pattern)
	for {
		run := sluice("group", "describe", "audit")
		if re.MatchString(run.stdout) {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("the group never matched %q; last describe:\n%s%s", pattern, run.stdout, run.stderr)
		case <-time.After(200 * time.Millisecond):
		}
	}
}
