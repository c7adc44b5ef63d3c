package broker

// CreatePartitions (key 37), versions 0-3.
//
// The active controller adds the partitions (core/controller,
// CreatePartitions: automatic placement continuing the topic's pattern, or
// a manual Assignment; ValidateOnly); any broker forwards the request to
// it. As for CreateTopics, the answer is sent once this broker's image
// shows the new partitions.
//
// Version notes: v2 is flexible; v3 is v2 with throttling on quota
// violation (no quotas here).

import "github.com/twmb/franz-go/pkg/kmsg"

func init() {
	registerAPI(&api{key: 37, advertisedMin: 0, honouredMin: 0, max: 3, handle: (*Broker).handleCreatePartitions})
}

func (b *Broker) handleCreatePartitions(x *exchange) {
	req := x.request.Body.(*kmsg.CreatePartitionsRequest)
	b.forward(req, func(r kmsg.Response) {
		resp := r.(*kmsg.CreatePartitionsResponse)
		b.imageWaiters.wait(func() bool {
			for i, t := range resp.Topics {
				if t.ErrorCode != 0 || req.ValidateOnly || i >= len(req.Topics) {
					continue
				}
				if topic, exists := b.image.Topics[t.Topic]; exists && len(topic.Partitions) < int(req.Topics[i].Count) || !b.topicSettledHere(t.Topic) {
					return false
				}
			}
			return true
		}, func() { x.respond(resp) })
	})
}
