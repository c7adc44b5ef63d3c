// Package peer is how one node talks to another: a Kafka client in
// miniature, speaking the same wire protocol clients speak, over
// core.Network. The quorum sends Vote, BeginQuorumEpoch and Fetch through
// it, replicas fetch from their leader through it, brokers register and
// heartbeat to the controller through it.
//
// One connection per peer, requests pipelined on it and answered in order,
// each with a timeout; a broken connection fails everything pending on it
// with ErrConnectionLost and is redialed, after a backoff, by the next
// request. Answers arrive through callbacks on the node's loop, like every
// other event in core.
//
// Start with Client.Request (client.go).
package peer
