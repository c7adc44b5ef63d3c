package history

import "fmt"

// checkOp checks one op, at position i of its history, on its own:
// bookkeeping fields and payload shape. previous is the op before it, nil
// for the first.
func checkOp(op *Op, i int, previous *Op) error {
	fail := func(format string, arguments ...any) error {
		return fmt.Errorf("history: op %d (%s %s by process %d): %s",
			i, op.Type, op.F, op.Process, fmt.Sprintf(format, arguments...))
	}
	switch {
	case op.Index != i:
		return fmt.Errorf("history: op at position %d has index %d", i, op.Index)
	case !op.Type.valid():
		return fail("unknown type")
	case !op.F.valid():
		return fail("unknown function")
	case op.Process < 0:
		return fail("negative process")
	case op.Time < 0:
		return fail("negative time %d", op.Time)
	case previous != nil && op.Time < previous.Time:
		return fail("time %d is before the previous op's %d", op.Time, previous.Time)
	}
	if op.Type == Fail || op.Type == Info {
		if !op.Payload.empty() {
			return fail("a %s completion carries no results", op.Type)
		}
		return nil
	}
	if problem := checkPayloadFields(op); problem != "" {
		return fail("%s", problem)
	}
	if problem := checkPayloadValues(op); problem != "" {
		return fail("%s", problem)
	}
	return nil
}

// checkPayloadFields says which payload field op must not carry, if any.
func checkPayloadFields(op *Op) string {
	p := &op.Payload
	switch {
	case len(p.Sends) > 0 && op.F != FuncSend:
		return "sends belong to send ops"
	case op.F == FuncSend && len(p.Sends) == 0:
		return "a send carries at least one value"
	case len(p.Polls) > 0 && !(op.F == FuncPoll && op.Type == OK):
		return "polls belong to ok poll completions"
	case len(p.Seeks) > 0 && op.F != FuncSeek:
		return "seeks belong to seek ops"
	case len(p.Commits) > 0 && op.F != FuncCommit && op.F != FuncFetchCommitted:
		return "commits belong to commit and fetch-committed ops"
	case len(p.Topics) > 0 && !(op.F == FuncSubscribe && op.Type == Invoke):
		return "topics belong to subscribe invokes"
	case len(p.Assigned) > 0 && op.F != FuncAssign && op.F != FuncSubscribe:
		return "assigned partitions belong to assign and subscribe ops"
	case (p.Group != "" || p.MemberID != "" || p.Generation != 0) && op.F != FuncSubscribe:
		return "group, member and generation belong to subscribe ops"
	}
	return ""
}

// checkPayloadValues says what is wrong with the values op carries, if
// anything.
func checkPayloadValues(op *Op) string {
	for _, send := range op.Sends {
		switch {
		case !validPartition(send.Partition):
			return fmt.Sprintf("send to invalid partition %q", send.Partition.String())
		case send.Value == "":
			return "a send's value is empty; values must be unique non-empty strings"
		case op.Type == Invoke && send.Offset != OffsetUnknown:
			return fmt.Sprintf("the invoke of value %q already has offset %d", send.Value, send.Offset)
		case send.Offset < OffsetUnknown:
			return fmt.Sprintf("value %q has offset %d", send.Value, send.Offset)
		}
	}
	for _, poll := range op.Polls {
		if !validPartition(poll.Partition) {
			return fmt.Sprintf("poll of invalid partition %q", poll.Partition.String())
		}
		if poll.From < OffsetUnknown {
			return fmt.Sprintf("poll of %s from offset %d", poll.Partition, poll.From)
		}
		for _, record := range poll.Records {
			if record.Offset < 0 {
				return fmt.Sprintf("poll of %s has a record at offset %d", poll.Partition, record.Offset)
			}
		}
	}
	for _, seek := range op.Seeks {
		if !validPartition(seek.Partition) || seek.Offset < 0 {
			return fmt.Sprintf("seek of %q to offset %d", seek.Partition.String(), seek.Offset)
		}
	}
	for _, commit := range op.Commits {
		if commit.Group == "" || !validPartition(commit.Partition) || commit.Offset < OffsetUnknown {
			return fmt.Sprintf("commit of group %q, partition %q, offset %d",
				commit.Group, commit.Partition.String(), commit.Offset)
		}
		if op.F == FuncCommit && commit.Offset == OffsetUnknown {
			return fmt.Sprintf("commit of group %q, partition %s without an offset", commit.Group, commit.Partition)
		}
	}
	for _, partition := range op.Assigned {
		if !validPartition(partition) {
			return fmt.Sprintf("assignment of invalid partition %q", partition.String())
		}
	}
	return ""
}

// checkCompletion checks an ok completion against its invoke.
func checkCompletion(invoke, completion *Op) error {
	if completion.Type != OK || completion.F != FuncSend {
		return nil
	}
	if len(completion.Sends) != len(invoke.Sends) {
		return fmt.Errorf("history: op %d acknowledges %d values, but op %d sent %d",
			completion.Index, len(completion.Sends), invoke.Index, len(invoke.Sends))
	}
	for i, acknowledged := range completion.Sends {
		sent := invoke.Sends[i]
		if acknowledged.Value != sent.Value || acknowledged.Partition != sent.Partition {
			return fmt.Errorf("history: op %d acknowledges %q to %s as its value %d, but op %d sent %q to %s",
				completion.Index, acknowledged.Value, acknowledged.Partition, i, invoke.Index, sent.Value, sent.Partition)
		}
	}
	return nil
}

func validPartition(tp TopicPartition) bool { return tp.Topic != "" && tp.Partition >= 0 }

func (p Payload) empty() bool {
	return len(p.Sends) == 0 && len(p.Polls) == 0 && len(p.Seeks) == 0 && len(p.Commits) == 0 &&
		len(p.Topics) == 0 && len(p.Assigned) == 0 && p.Group == "" && p.MemberID == "" && p.Generation == 0
}
