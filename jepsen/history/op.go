package history

// OffsetUnknown stands for an offset nobody told us: a send not yet
// acknowledged, a poll whose fetch position was not recorded, a group with
// no committed offset.
const OffsetUnknown int64 = -1

// Op is one line of a history: the invoke or the completion of one
// operation by one logical process.
type Op struct {
	// Index is the op's position in the history, set by the Recorder.
	// Checkers name ops by it.
	Index int `json:"index"`
	// Process is the logical client that ran the operation. A process runs
	// one operation at a time; after an info completion it is retired and
	// the client continues under a new process number.
	Process int  `json:"process"`
	Type    Type `json:"type"`
	F       Func `json:"f"`
	// Time is nanoseconds since the start of the run (virtual time in the
	// simulator), nondecreasing along the history.
	Time int64 `json:"time"`

	Payload

	// Error says why a fail or info completion ended so.
	Error string `json:"error,omitempty"`
}

// Payload is what an op carries besides its bookkeeping; which fields are
// used depends on F (see Func's constants). It is embedded in Op, so
// op.Sends and friends read directly.
type Payload struct {
	Sends   []Send   `json:"sends,omitempty"`
	Polls   []Poll   `json:"polls,omitempty"`
	Seeks   []Seek   `json:"seeks,omitempty"`
	Commits []Commit `json:"commits,omitempty"`

	// Topics are what a Subscribe invoke asked for.
	Topics []string `json:"topics,omitempty"`
	// Assigned is an Assign's partitions, or a Subscribe's resulting
	// assignment.
	Assigned []TopicPartition `json:"assigned,omitempty"`
	// Group, MemberID and Generation identify a Subscribe's group
	// membership: who got Assigned, in which generation.
	Group      string `json:"group,omitempty"`
	MemberID   string `json:"member_id,omitempty"`
	Generation int32  `json:"generation,omitempty"`
}

// Send is one value produced to one partition. Values are unique strings
// chosen by the workload ("p3-17"): uniqueness is what lets a checker tell
// which write a read saw.
type Send struct {
	Partition TopicPartition `json:"partition"`
	Key       string         `json:"key,omitempty"`
	Value     string         `json:"value"`
	// Offset is where the broker said it put the value; OffsetUnknown on
	// the invoke, and on an ok completion that was not told.
	Offset int64 `json:"offset"`
}

// Poll is what one consumer poll received from one partition.
type Poll struct {
	Partition TopicPartition `json:"partition"`
	// From is the position the consumer fetched from, OffsetUnknown if the
	// client does not know. An empty poll from a known position says the
	// partition had nothing readable there.
	From int64 `json:"from"`
	// Records are in the order the client received them.
	Records []Record `json:"records"`
}

// Record is one record of a poll.
type Record struct {
	Offset int64  `json:"offset"`
	Key    string `json:"key,omitempty"`
	Value  string `json:"value"`
}

// Seek moves a consumer to Offset in Partition.
type Seek struct {
	Partition TopicPartition `json:"partition"`
	Offset    int64          `json:"offset"`
}

// Commit is one consumer-group offset, written by Commit or read by
// FetchCommitted.
type Commit struct {
	Group      string         `json:"group"`
	Partition  TopicPartition `json:"partition"`
	Offset     int64          `json:"offset"`
	Generation int32          `json:"generation,omitempty"`
}
