package checker

import (
	"fmt"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
	"pgregory.net/rapid"
)

// TestDroppingRedundantUnknownCommitsKeepsTheVerdict checks
// withoutRedundantUnknownWrites against porcupine on the whole register
// history: random small histories of commits (some of unknown outcome,
// of few offsets, so that several share one) and reads, right or wrong,
// must get the same verdict with the redundant commits dropped as without.
func TestDroppingRedundantUnknownCommitsKeepsTheVerdict(t *testing.T) {
	dropped := 0
	rapid.Check(t, func(t *rapid.T) {
		// Several histories per check: a history that needs two of
		// the unknown commits of one offset (written, overwritten,
		// written again) is rare, and rapid's default is 100 checks.
		for round := range historiesPerCheck {
			checkDroppingKeepsTheVerdict(t, round, &dropped)
		}
	})
	if dropped == 0 {
		t.Fatal("no history had a commit to drop: the test checked nothing")
	}
}

// historiesPerCheck is how many histories each rapid check draws.
const historiesPerCheck = 100

func checkDroppingKeepsTheVerdict(t *rapid.T, round int, dropped *int) {
	{
		var operations []porcupine.Operation
		for i := range rapid.IntRange(3, 9).Draw(t, fmt.Sprintf("operations %d", round)) {
			call := rapid.Int64Range(0, 10).Draw(t, fmt.Sprintf("call %d.%d", round, i))
			ret := call + rapid.Int64Range(1, 6).Draw(t, fmt.Sprintf("length %d.%d", round, i))
			switch rapid.IntRange(0, 2).Draw(t, fmt.Sprintf("kind %d.%d", round, i)) {
			case 0: // a commit answered
				offset := rapid.Int64Range(1, 2).Draw(t, fmt.Sprintf("offset %d.%d", round, i))
				operations = append(operations, porcupine.Operation{ClientId: i, Call: call, Return: ret, Input: &registerInput{write: true, offset: offset}, Output: int64(0)})
			case 1: // a commit of unknown outcome: mostly of one offset
				offset := int64(1 + rapid.IntRange(0, 3).Draw(t, fmt.Sprintf("offset %d.%d", round, i))/3)
				operations = append(operations, porcupine.Operation{ClientId: i, Call: call, Return: returnTimeUnknown, Input: &registerInput{write: true, offset: offset}, Output: int64(0)})
			default: // a read
				read := rapid.Int64Range(-1, 2).Draw(t, fmt.Sprintf("read %d.%d", round, i))
				operations = append(operations, porcupine.Operation{ClientId: i, Call: call, Return: ret, Input: &registerInput{}, Output: read})
			}
		}
		reduced := withoutRedundantUnknownWrites(operations)
		*dropped += len(operations) - len(reduced)
		whole := porcupine.CheckOperations(committedOffsetModel, operations)
		if got := porcupine.CheckOperations(committedOffsetModel, reduced); got != whole {
			t.Fatalf("linearizable %v with every commit, %v with %d of %d kept", whole, got, len(reduced), len(operations))
		}
	}
}

// TestManyRetriedUnknownCommitsAreCheckedAtOnce is the shape of
// cluster-inconclusive-187414: a member's commit of one offset retried
// through twenty-two infos, read back in between, then a commit of
// another offset. Porcupine gave up on it; with the retries dropped it
// decides at once, and still finds a read of a value nobody wrote.
func TestManyRetriedUnknownCommitsAreCheckedAtOnce(t *testing.T) {
	var operations []porcupine.Operation
	add := func(call, ret int64, input *registerInput, output int64) {
		operations = append(operations, porcupine.Operation{ClientId: len(operations), Call: call, Return: ret, Input: input, Output: output})
	}
	add(0, 1, &registerInput{write: true, offset: 15}, 0)
	for i := range int64(22) {
		add(10+2*i, returnTimeUnknown, &registerInput{write: true, offset: 17}, 0)
		read := int64(15)
		if i >= 5 {
			read = 17 // a retry took effect
		}
		add(11+2*i, 11+2*i+1, &registerInput{}, read)
	}
	add(100, 101, &registerInput{write: true, offset: 26}, 0)
	add(102, 103, &registerInput{}, 26)
	reduced := withoutRedundantUnknownWrites(operations)
	if len(reduced) != len(operations)-20 {
		t.Fatalf("kept %d of %d operations, want all but 20 of the 22 retries", len(reduced), len(operations))
	}
	if result, _ := porcupine.CheckOperationsVerbose(committedOffsetModel, reduced, 10*time.Second); result != porcupine.Ok {
		t.Fatalf("porcupine says %s, want ok", result)
	}
	bad := append(reduced, porcupine.Operation{ClientId: 99, Call: 104, Return: 105, Input: &registerInput{}, Output: int64(16)})
	if result, _ := porcupine.CheckOperationsVerbose(committedOffsetModel, bad, 10*time.Second); result != porcupine.Illegal {
		t.Fatalf("porcupine says %s for a read of 16, which nobody committed; want illegal", result)
	}
}

// TestTwoUnknownCommitsOfOneOffsetCanBothBeNeeded: offset 17 committed
// twice with unknown outcome, read back, overwritten by 26, read back, and
// read as 17 again: the second retry took effect after the overwrite. Both
// retries are needed, and both must be kept.
func TestTwoUnknownCommitsOfOneOffsetCanBothBeNeeded(t *testing.T) {
	operations := []porcupine.Operation{
		{ClientId: 0, Call: 0, Return: returnTimeUnknown, Input: &registerInput{write: true, offset: 17}, Output: int64(0)},
		{ClientId: 1, Call: 1, Return: returnTimeUnknown, Input: &registerInput{write: true, offset: 17}, Output: int64(0)},
		{ClientId: 2, Call: 2, Return: 3, Input: &registerInput{}, Output: int64(17)},
		{ClientId: 3, Call: 4, Return: 5, Input: &registerInput{write: true, offset: 26}, Output: int64(0)},
		{ClientId: 4, Call: 6, Return: 7, Input: &registerInput{}, Output: int64(26)},
		{ClientId: 5, Call: 8, Return: 9, Input: &registerInput{}, Output: int64(17)},
	}
	reduced := withoutRedundantUnknownWrites(operations)
	if len(reduced) != len(operations) || !porcupine.CheckOperations(committedOffsetModel, reduced) {
		t.Fatalf("kept %d of %d operations, want every one, and a linearizable history", len(reduced), len(operations))
	}
}

// TestAWriteReturningAsTheRetriesBeginCountsAgainstThem is the history
// the property above found (rapid seed 12479366437208101423): the commit
// of 2 returns at the instant the two unknown commits of 1 are invoked,
// so it overlaps them, and a linearization needs both of them (1, read,
// 2, read of 2, 1 again, read of 1, the last two reads overlapping).
func TestAWriteReturningAsTheRetriesBeginCountsAgainstThem(t *testing.T) {
	operations := []porcupine.Operation{
		{ClientId: 0, Call: 1, Return: 3, Input: &registerInput{write: true, offset: 2}, Output: int64(0)},
		{ClientId: 1, Call: 0, Return: 3, Input: &registerInput{}, Output: int64(1)},
		{ClientId: 2, Call: 0, Return: 3, Input: &registerInput{}, Output: int64(1)},
		{ClientId: 3, Call: 0, Return: 1, Input: &registerInput{}, Output: int64(-1)},
		{ClientId: 4, Call: 4, Return: 6, Input: &registerInput{}, Output: int64(1)},
		{ClientId: 5, Call: 3, Return: returnTimeUnknown, Input: &registerInput{write: true, offset: 1}, Output: int64(0)},
		{ClientId: 6, Call: 6, Return: 11, Input: &registerInput{}, Output: int64(2)},
		{ClientId: 7, Call: 3, Return: returnTimeUnknown, Input: &registerInput{write: true, offset: 1}, Output: int64(0)},
	}
	if !porcupine.CheckOperations(committedOffsetModel, operations) {
		t.Fatal("porcupine finds the whole history illegal; the test's premise is wrong")
	}
	reduced := withoutRedundantUnknownWrites(operations)
	if len(reduced) != len(operations) || !porcupine.CheckOperations(committedOffsetModel, reduced) {
		t.Fatalf("kept %d of %d operations, want every one, and a linearizable history", len(reduced), len(operations))
	}
}
