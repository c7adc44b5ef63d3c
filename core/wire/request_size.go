package wire

import "github.com/twmb/franz-go/pkg/kmsg"

// Requests are encoded into a buffer sized up front. Encoding into an
// empty buffer grows it by doubling from a few bytes: a replica's fetch
// of ten partitions (394 bytes) cost seven allocations and as many
// copies, which the simulator's profile showed as most of AppendRequest's
// time. A produce carries its records, which would be copied at every
// doubling.
const (
	// requestBytesSmall is the first buffer of any request beside its
	// client id: enough for the small fixed-size requests nodes send
	// most (heartbeats, votes, 20 to 60 bytes) without growing.
	requestBytesSmall = 64
	// fetchPartitionRequestBytes bounds what a fetch request usually
	// spends on one partition: the partition, epochs, offsets and byte
	// limit (32 bytes), the tag count, and room for a high watermark
	// tag. A partition carrying a replica directory id (KIP-853, 18
	// more bytes) may make the buffer grow once.
	fetchPartitionRequestBytes = 44
	// topicRequestOverheadBytes bounds what a fetch or produce request
	// adds per topic beside its name: a topic id, the partition array's
	// length, tags.
	topicRequestOverheadBytes = 32
	// producePartitionOverheadBytes bounds what a produce request adds
	// to each partition's records: the partition, the records' length,
	// tags.
	producePartitionOverheadBytes = 16
)

// requestBytesHint is the capacity to encode a request with the given
// client id into: exact enough for a fetch or a produce that the encoding
// does not grow the buffer, small for the rest (which are small).
func requestBytesHint(clientID string, req kmsg.Request) int {
	size := requestBytesSmall + len(clientID)
	switch r := req.(type) {
	case *kmsg.FetchRequest:
		for i := range r.Topics {
			size += topicRequestOverheadBytes + len(r.Topics[i].Topic) + fetchPartitionRequestBytes*len(r.Topics[i].Partitions)
		}
		for i := range r.ForgottenTopics {
			size += topicRequestOverheadBytes + len(r.ForgottenTopics[i].Topic) + 4*len(r.ForgottenTopics[i].Partitions)
		}
	case *kmsg.ProduceRequest:
		for i := range r.Topics {
			t := &r.Topics[i]
			size += topicRequestOverheadBytes + len(t.Topic)
			for j := range t.Partitions {
				size += producePartitionOverheadBytes + len(t.Partitions[j].Records)
			}
		}
	}
	return size
}
