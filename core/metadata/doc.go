// Package metadata is the cluster's metadata as a log of records, and the
// image those records build: brokers, topics, partitions with their replicas,
// leader, ISR and epochs, configs, and producer-id blocks.
//
// The design follows KRaft (KIP-500, KIP-631): nothing changes the metadata
// except appending records to the metadata log, and every node applies the
// committed records in order to its own Image. A node's view is therefore
// always a prefix of the committed log, and replaying the log rebuilds it.
// Who commits records is not this package's business: a single node commits
// them by syncing its local metadata log, a cluster through the Raft quorum
// (core/quorum).
//
// Records are JSON inside ordinary RecordBatch records, which keeps the
// metadata log readable with any Kafka tool that dumps a partition.
//
// Start with Record (records.go), then Image.Apply (image.go).
package metadata
