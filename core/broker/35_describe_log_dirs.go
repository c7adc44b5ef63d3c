package broker

// DescribeLogDirs (key 35), versions 1-4: kafka-log-dirs.sh --describe,
// AdminClient.describeLogDirs, and the tools that show a topic's size on
// disk.
//
// Sluice keeps every replica in one data directory (log.dirs names one),
// so the answer has one directory, named as the broker's configuration
// names it (Config.LogDir), with every partition this broker hosts, or
// those of the topics named: the bytes its segments hold that readers can
// reach, and OffsetLag, how far its log end is below its high watermark
// (0 on a leader, as in Kafka). A partition named that this broker does not
// host is left out, as Kafka does. There are no future replicas
// (AlterReplicaLogDirs is not served), and the volume's total and usable
// bytes (v4) are unknown here: -1.
//
// Version notes: Kafka 4 serves v1 and up; v1 is v0 with throttling, v2
// is flexible, v3 adds the top-level ErrorCode, v4 the volume's sizes.

import "github.com/twmb/franz-go/pkg/kmsg"

func init() {
	registerAPI(&api{key: 35, advertisedMin: 1, honouredMin: 1, max: 4, handle: (*Broker).handleDescribeLogDirs})
}

func (b *Broker) handleDescribeLogDirs(x *exchange) {
	req := x.request.Body.(*kmsg.DescribeLogDirsRequest)
	resp := req.ResponseKind().(*kmsg.DescribeLogDirsResponse)
	wanted := func(partitionKey) bool { return true }
	if req.Topics != nil {
		named := map[partitionKey]bool{}
		for _, t := range req.Topics {
			for _, p := range t.Partitions {
				named[partitionKey{topic: t.Topic, partition: p}] = true
			}
		}
		wanted = func(key partitionKey) bool { return named[key] }
	}
	dir := kmsg.NewDescribeLogDirsResponseDir()
	dir.Dir = b.config.LogDir
	if dir.Dir == "" {
		dir.Dir = "/"
	}
	byTopic := map[string]int{}
	for _, key := range b.sortedPartitionKeys() {
		p := b.partitions[key]
		if !wanted(key) {
			continue
		}
		i, seen := byTopic[key.topic]
		if !seen {
			i = len(dir.Topics)
			byTopic[key.topic] = i
			t := kmsg.NewDescribeLogDirsResponseDirTopic()
			t.Topic = key.topic
			dir.Topics = append(dir.Topics, t)
		}
		answer := kmsg.NewDescribeLogDirsResponseDirTopicPartition()
		answer.Partition, answer.Size = key.partition, p.Size()
		answer.OffsetLag = max(p.HighWatermark()-p.LogEndOffset(), 0)
		dir.Topics[i].Partitions = append(dir.Topics[i].Partitions, answer)
	}
	resp.Dirs = append(resp.Dirs, dir)
	x.respond(resp)
}
