package broker

// FetchSnapshot (key 59), versions 0-1. Node to node, on the controller
// listener.
//
// A quorum member too far behind to catch up from the leader's metadata
// log downloads the leader's latest snapshot, a chunk at a time (KIP-630).
// The quorum (core/quorum) serves it.

import "github.com/twmb/franz-go/pkg/kmsg"

func init() {
	registerAPI(&api{key: 59, advertisedMin: 0, honouredMin: 0, max: 1, nodeToNode: true, handle: (*Broker).handleFetchSnapshot})
}

func (b *Broker) handleFetchSnapshot(x *exchange) {
	b.quorum.HandleFetchSnapshot(x.request.Body.(*kmsg.FetchSnapshotRequest), func(resp *kmsg.FetchSnapshotResponse) { x.respond(resp) })
}
