// Package controller is the cluster's metadata state machine, as Kafka's
// KRaft controller is: it turns admin requests (CreateTopics, DeleteTopics,
// CreatePartitions, config changes) and broker lifecycle events
// (registration, heartbeats, fencing, controlled shutdown, AlterPartition,
// producer id blocks) into metadata records, proposes them to the quorum,
// and answers once they are committed. Its view of the cluster is an Image
// built only from committed records, like every other node's.
//
// Every controller node follows the committed log, but only the quorum
// leader's controller is active (activation.go): it commits a barrier
// first, so that its image holds everything earlier terms committed, then
// gives every registered broker a fresh heartbeat session and starts
// acting. An inactive controller answers NOT_CONTROLLER.
//
// Operations run one at a time, in arrival order: each is validated against
// the committed image, its records proposed as one batch, and the next one
// starts only once they commit. Admin traffic is light, and serializing it
// means no operation is ever validated against state a pending one is about
// to change. Timers (session expiry) submit operations like requests do.
//
// Every operation takes the Kafka request and answers through a callback
// with the Kafka response, so the same code serves a broker's own calls and
// requests forwarded from other brokers.
//
// It must never change the image itself (only Apply, fed by the quorum,
// does), answer before its records commit, act while inactive, or let map
// order reach a record.
//
// Start with Controller and submit (controller.go) and the switch
// (activation.go); then broker liveness: register_broker.go, liveness.go
// (sessions), heartbeat.go, elections.go (who leads when a broker leaves
// or returns), alter_partition.go; then the admin operations:
// create_topics.go (with placement.go and manual_assignment.go),
// delete_topics.go, create_partitions.go, alter_configs.go and
// incremental_alter_configs.go (with config_alterations.go),
// allocate_producer_ids.go. Limits are in limits.go.
package controller
