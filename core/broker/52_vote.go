package broker

// Vote (key 52), versions 0-2. Node to node, on the controller listener.
//
// A voter of the metadata quorum asks for this node's vote (or pre-vote,
// KIP-996) in an election. The quorum (core/quorum) decides and answers;
// this file only hands the request over. See KIP-595 for the protocol.

import "github.com/twmb/franz-go/pkg/kmsg"

func init() {
	registerAPI(&api{key: 52, advertisedMin: 0, honouredMin: 0, max: 2, nodeToNode: true, handle: (*Broker).handleVote})
}

func (b *Broker) handleVote(x *exchange) {
	b.quorum.HandleVote(x.request.Body.(*kmsg.VoteRequest), func(resp *kmsg.VoteResponse) { x.respond(resp) })
}
