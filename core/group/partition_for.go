package group

import "unicode/utf16"

// PartitionFor is the partition of __consumer_offsets that holds groupID
// when the topic has partitions partitions — Kafka's own mapping, so that
// a Kafka tool reading the topic finds each group where Kafka would put
// it: abs(groupID.hashCode()) % partitions, with Java's String.hashCode
// (s[0]*31^(n-1) + ... + s[n-1] over UTF-16 code units, in 32-bit
// arithmetic that wraps) and Kafka's abs (Utils.abs: n & 0x7fffffff, which
// maps Integer.MIN_VALUE to 0 where Math.abs would leave it negative).
func PartitionFor(groupID string, partitions int32) int32 {
	if partitions < 1 {
		panic("group: PartitionFor with fewer than one partition")
	}
	var hash int32
	for _, unit := range utf16.Encode([]rune(groupID)) {
		hash = 31*hash + int32(unit)
	}
	return (hash & 0x7fffffff) % partitions
}
