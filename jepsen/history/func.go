package history

import "fmt"

// Func is what an operation does.
type Func uint8

const (
	// FuncSend produces values (Op.Sends). The invoke carries the values with
	// Offset OffsetUnknown; an ok completion carries the same sends with
	// the offsets the broker acknowledged.
	FuncSend Func = iota + 1
	// FuncPoll is one consumer poll. Its ok completion carries, per partition,
	// the records received (Op.Polls).
	FuncPoll
	// FuncAssign sets the consumer's partitions by hand (Op.Assigned, on the
	// invoke and the ok completion).
	FuncAssign
	// FuncSubscribe joins a consumer group. The invoke may name topics
	// (Op.Topics); the ok completion carries the assignment it got: Group,
	// MemberID, Generation and Assigned.
	FuncSubscribe
	// FuncSeek moves the consumer's position in some partitions (Op.Seeks).
	FuncSeek
	// FuncCommit stores consumer-group offsets (Op.Commits).
	FuncCommit
	// FuncFetchCommitted reads consumer-group offsets; the ok completion's
	// Op.Commits carry what was read, OffsetUnknown when none is stored.
	FuncFetchCommitted
	// FuncCrash records that the client process died (its consumer position
	// and assignment are gone). The process is not used again.
	FuncCrash
)

var funcNames = [...]string{
	FuncSend:           "send",
	FuncPoll:           "poll",
	FuncAssign:         "assign",
	FuncSubscribe:      "subscribe",
	FuncSeek:           "seek",
	FuncCommit:         "commit",
	FuncFetchCommitted: "fetch-committed",
	FuncCrash:          "crash",
}

func (f Func) String() string {
	if f.valid() {
		return funcNames[f]
	}
	return fmt.Sprintf("func(%d)", uint8(f))
}

func (f Func) valid() bool { return f >= FuncSend && f <= FuncCrash }

// MarshalText writes the name, so JSON carries "send" rather than 1.
func (f Func) MarshalText() ([]byte, error) {
	if !f.valid() {
		return nil, fmt.Errorf("history: cannot encode unknown op function %d", uint8(f))
	}
	return []byte(funcNames[f]), nil
}

// UnmarshalText reads a name written by MarshalText.
func (f *Func) UnmarshalText(text []byte) error {
	for candidate := FuncSend; candidate <= FuncCrash; candidate++ {
		if funcNames[candidate] == string(text) {
			*f = candidate
			return nil
		}
	}
	return fmt.Errorf("history: unknown op function %q", text)
}
