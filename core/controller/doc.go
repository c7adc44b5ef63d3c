// Package controller is the cluster's metadata state machine, as Kafka's
// KRaft controller is: it turns admin requests (CreateTopics, DeleteTopics,
// CreatePartitions, config changes) and broker lifecycle events (register,
// producer id blocks; later heartbeat, fence, AlterPartition) into metadata
// records, proposes them to the quorum, and answers once they are
// committed. Its view of the cluster is an Image built only from committed
// records, like every other node's.
//
// Operations run one at a time, in arrival order: each is validated against
// the committed image, its records proposed as one batch, and the next one
// starts only once they commit. Admin traffic is light, and serializing it
// means no operation is ever validated against state a pending one is about
// to change.
//
// Every operation takes the Kafka request and answers through a callback
// with the Kafka response, so the same code serves a broker's own calls and,
// later, requests forwarded from other brokers.
//
// It must never change the image itself (only Apply, fed by the quorum,
// does), answer before its records commit, or let map order reach a record.
//
// Start with Controller and submit (controller.go), then one file per
// operation: register_broker.go, create_topics.go (with placement.go and
// manual_assignment.go), delete_topics.go, create_partitions.go,
// alter_configs.go and incremental_alter_configs.go (with
// config_alterations.go), allocate_producer_ids.go. Limits are in
// limits.go.
package controller
