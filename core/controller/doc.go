// Package controller is the cluster's metadata state machine, as Kafka's
// KRaft controller is: it turns admin requests (CreateTopics, DeleteTopics,
// CreatePartitions, config changes) and broker lifecycle events (register,
// heartbeat, fence) into metadata records, proposes them to the quorum, and
// answers once they are committed. Its view of the cluster is an Image built
// only from committed records, like every other node's.
//
// Operations run one at a time, in arrival order: each is validated against
// the committed image, its records proposed, and the next one starts only
// once they commit. Admin traffic is light, and serializing it means no
// operation is ever validated against state a pending one is about to
// change.
//
// Start with Controller (controller.go), then one file per operation.
package controller
