package simclient

import "sluice/jepsen/history"

// logStarts is, per partition, the highest log start offset any answer a
// consumer got showed (a fetch answer carries its leader's; ListOffsets
// earliest is it). Below it a leader said retention deleted the records,
// even if another replica, elected later with less deleted, still holds
// some of them: followers learn the leader's log start only from their
// fetches, so a partition's log start can step back when its leadership
// moves, in Kafka as here.
type logStarts map[history.TopicPartition]int64

// saw notes a log start offset an answer showed.
func (s logStarts) saw(tp history.TopicPartition, offset int64) {
	if offset > s[tp] {
		s[tp] = offset
	}
}
