package wire

import "github.com/twmb/franz-go/pkg/kmsg"

// Answers are encoded into a buffer sized up front. A fetch answer is
// mostly record bytes (a megabyte for a consumer, up to tens of megabytes
// for a follower); encoding it into a buffer that starts empty would grow
// it by doubling, copying the records several times and leaving as much
// garbage, which the profile of a consume run showed as the broker's main
// cost after the socket itself.
const (
	// responseBytesSmall is the first buffer of any answer but a
	// fetch's: enough for all but the largest metadata answers without
	// growing.
	responseBytesSmall = 256
	// fetchResponseOverheadBytes bounds what a fetch answer holds beside
	// its topics: the frame's size, the correlation id, throttle time,
	// error code, session id, the topic array's length, tags.
	fetchResponseOverheadBytes = 32
	// fetchPartitionOverheadBytes bounds what a fetch answer adds to
	// each partition's record bytes: partition number, error code,
	// watermarks, the (empty) aborted transactions, lengths and tags.
	fetchPartitionOverheadBytes = 64
	// fetchTopicOverheadBytes bounds what it adds per topic beside the
	// topic name: its id, the partition array's length, tags.
	fetchTopicOverheadBytes = 32
)

// responseBytesHint is the capacity AppendResponse grows its buffer to: a
// bound on a fetch answer's size, so that its encoding never grows the
// buffer again, small for the rest (which are small).
func responseBytesHint(resp kmsg.Response) int {
	fetch, ok := resp.(*kmsg.FetchResponse)
	if !ok {
		return responseBytesSmall
	}
	size := fetchResponseOverheadBytes
	for i := range fetch.Topics {
		t := &fetch.Topics[i]
		size += fetchTopicOverheadBytes + len(t.Topic)
		for j := range t.Partitions {
			size += fetchPartitionOverheadBytes + len(t.Partitions[j].RecordBatches)
		}
	}
	return size
}
