package history

import "slices"

// payloadStore is where a Recorder copies the payloads it records, so a
// caller reusing its buffers cannot rewrite recorded history. A history
// holds thousands of small slices (one send, a poll's few records), so
// instead of allocating each on its own the store copies them into shared
// blocks, which it allocates a block at a time. Every slice handed out is
// capped at its own length: appending to it copies, and never writes over
// its neighbour in the block. Nothing is reused: a block lives while any of
// its slices does, which in a history is as long as the history.
type payloadStore struct {
	sends      block[Send]
	polls      block[Poll]
	records    block[Record]
	seeks      block[Seek]
	commits    block[Commit]
	topics     block[string]
	partitions block[TopicPartition]
}

// clone copies every slice of p into the store.
func (s *payloadStore) clone(p Payload) Payload {
	p.Sends = s.sends.clone(p.Sends)
	p.Seeks = s.seeks.clone(p.Seeks)
	p.Commits = s.commits.clone(p.Commits)
	p.Topics = s.topics.clone(p.Topics)
	p.Assigned = s.partitions.clone(p.Assigned)
	if p.Polls != nil {
		polls := s.polls.clone(p.Polls)
		for i := range polls {
			polls[i].Records = s.records.clone(polls[i].Records)
		}
		p.Polls = polls
	}
	return p
}

// blockLen is how many values a block holds: a few dozen payloads' worth,
// a few KiB for every type a payload carries.
const blockLen = 128

// block hands out copies of slices of T from shared arrays of blockLen.
type block[T any] struct {
	// filling is the current array, as far as it is handed out.
	filling []T
}

// clone copies values into the block and returns the copy, capped at its
// length. Like slices.Clone, it keeps nil nil and an empty slice empty (a
// poll that read nothing has empty, not nil, records). A slice longer
// than a quarter of a block gets an array of its own, so the tail left
// unused when a block runs out stays short.
func (b *block[T]) clone(values []T) []T {
	if len(values) == 0 || len(values) > blockLen/4 {
		return slices.Clone(values)
	}
	if cap(b.filling)-len(b.filling) < len(values) {
		b.filling = make([]T, 0, blockLen)
	}
	start := len(b.filling)
	b.filling = append(b.filling, values...)
	return b.filling[start:len(b.filling):len(b.filling)]
}
