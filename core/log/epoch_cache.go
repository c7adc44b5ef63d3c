package log

import (
	"fmt"
	"sort"
)

// EpochEntry says that leader epoch Epoch wrote its first batch at
// StartOffset: Kafka's leader epoch cache entry (KIP-101).
type EpochEntry struct {
	Epoch       int32
	StartOffset int64
}

// undefinedEpoch and undefinedEpochOffset are Kafka's UNDEFINED_EPOCH and
// UNDEFINED_EPOCH_OFFSET, the "don't know" answer of OffsetForLeaderEpoch.
const (
	undefinedEpoch       = -1
	undefinedEpochOffset = -1
)

// epochCache is the leader epoch cache: for each epoch that wrote to the
// log, the offset of its first batch. Followers use it to find where their
// log diverges from the leader's (KIP-101, KIP-279).
//
// Invariant: entries are strictly increasing in epoch and in start offset;
// epochs never go back (assign panics if asked to), and there are at most
// epochEntriesMax entries.
type epochCache struct {
	entries []EpochEntry
}

func (c *epochCache) latestEpoch() int32 {
	if len(c.entries) == 0 {
		return undefinedEpoch
	}
	return c.entries[len(c.entries)-1].Epoch
}

// startsNewEpoch reports whether a batch of epoch would add an entry.
func (c *epochCache) startsNewEpoch(epoch int32) bool {
	return len(c.entries) == 0 || epoch != c.latestEpoch()
}

// assign records that a batch of epoch starts at offset. The first batch of
// a new epoch adds an entry; later batches of the latest epoch change
// nothing.
func (c *epochCache) assign(epoch int32, offset int64) {
	if !c.startsNewEpoch(epoch) {
		return
	}
	if epoch < 0 {
		panic(fmt.Sprintf("log: epoch cache asked to assign negative epoch %d", epoch))
	}
	if n := len(c.entries); n > 0 {
		last := c.entries[n-1]
		if epoch < last.Epoch || offset < last.StartOffset {
			panic(fmt.Sprintf("log: epoch cache went back: (%d, %d) after (%d, %d)", epoch, offset, last.Epoch, last.StartOffset))
		}
		if offset == last.StartOffset {
			// The latest epoch holds no batch: only the log start was
			// moved onto it (truncateFromStart). The new epoch replaces it.
			c.entries[n-1] = EpochEntry{Epoch: epoch, StartOffset: offset}
			return
		}
	}
	if len(c.entries) >= epochEntriesMax {
		panic("log: epoch cache overflow; appends must check startsNewEpoch first")
	}
	c.entries = append(c.entries, EpochEntry{Epoch: epoch, StartOffset: offset})
}

// truncateFromEnd forgets epochs that start at or after endOffset, after the
// log was cut there.
func (c *epochCache) truncateFromEnd(endOffset int64) {
	i := sort.Search(len(c.entries), func(i int) bool { return c.entries[i].StartOffset >= endOffset })
	c.entries = c.entries[:i]
}

// truncateFromStart forgets epochs wholly below startOffset, after the log
// start moved there. As in Kafka, the epoch in force at startOffset is kept
// and its start moved up to startOffset.
func (c *epochCache) truncateFromStart(startOffset int64) {
	i := sort.Search(len(c.entries), func(i int) bool { return c.entries[i].StartOffset > startOffset })
	if i == 0 {
		return
	}
	floor := c.entries[i-1]
	floor.StartOffset = startOffset
	c.entries = append([]EpochEntry{floor}, c.entries[i:]...)
}

// startsAt reports whether epoch's first batch starts at offset.
func (c *epochCache) startsAt(epoch int32, offset int64) bool {
	i := sort.Search(len(c.entries), func(i int) bool { return c.entries[i].StartOffset >= offset })
	return i < len(c.entries) && c.entries[i] == EpochEntry{Epoch: epoch, StartOffset: offset}
}

// epochAt is the epoch the cache says wrote offset, if it knows.
func (c *epochCache) epochAt(offset int64) (int32, bool) {
	i := sort.Search(len(c.entries), func(i int) bool { return c.entries[i].StartOffset > offset })
	if i == 0 {
		return undefinedEpoch, false
	}
	return c.entries[i-1].Epoch, true
}

// endOffsetFor answers OffsetForLeaderEpoch exactly as Kafka's
// LeaderEpochFileCache.endOffsetFor does (KIP-101, refined by KIP-279):
//   - the latest epoch: (epoch, logEndOffset), since it is still writing;
//   - an epoch with a later one in the cache: the largest cached epoch at or
//     below it, and the start offset of the first epoch above it;
//   - an epoch below every cached one: (epoch, start of the first cached
//     epoch) - that history was deleted, and this lets a follower replicate
//     from the leader's start;
//   - undefined (-1), above the latest, or an empty cache: (-1, -1).
func (c *epochCache) endOffsetFor(epoch int32, logEndOffset int64) (int32, int64) {
	if epoch == undefinedEpoch || len(c.entries) == 0 {
		return undefinedEpoch, undefinedEpochOffset
	}
	if epoch == c.latestEpoch() {
		return epoch, logEndOffset
	}
	higher := sort.Search(len(c.entries), func(i int) bool { return c.entries[i].Epoch > epoch })
	if higher == len(c.entries) {
		return undefinedEpoch, undefinedEpochOffset
	}
	if higher == 0 {
		return epoch, c.entries[0].StartOffset
	}
	return c.entries[higher-1].Epoch, c.entries[higher].StartOffset
}

func (c *epochCache) clone() []EpochEntry {
	return append([]EpochEntry(nil), c.entries...)
}
