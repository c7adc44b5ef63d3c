// Package quorum commits metadata records: it decides when a record
// appended to the metadata log is committed, then hands committed records to
// the node in log order.
//
// Local is the single-node quorum: one voter, so a record is committed as
// soon as the node's own metadata log has synced it. The Raft quorum for a
// cluster (KRaft-style, KIP-595) keeps the same contract: Propose on the
// leader, committed records delivered in order on every node.
//
// Start with Local (local.go).
package quorum
