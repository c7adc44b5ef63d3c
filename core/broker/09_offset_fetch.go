package broker

// OffsetFetch (key 9), versions 1-8.
//
// Handed to the group coordinator (core/group, offset_fetch.go): the
// committed offsets of the partitions asked for (-1 where there is none),
// never a commit still on its way to the log.
//
// The answer claims to be the latest commit, so only a broker sure it still
// leads the offsets partition may give it: one whose lease from the
// controller has run out (lifecycle.go, holdsLease) — cut off from the
// controller, perhaps already fenced and replaced — answers
// NOT_COORDINATOR, and the client finds the new coordinator. Without this,
// a coordinator stranded from its peers but not from its clients serves
// offsets older than what its successor has acknowledged since.
//
// Version notes: v2 asks for all of a group's offsets with a null topic
// list and adds a top-level error; v5 answers leader epochs; v6 is
// flexible; v7 RequireStable (every offset is stable without
// transactions); v8 (KIP-709) asks about several groups at once.

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func init() {
	registerAPI(&api{key: 9, advertisedMin: 1, honouredMin: 1, max: 8, handle: (*Broker).handleOffsetFetch})
}

func (b *Broker) handleOffsetFetch(x *exchange) {
	req := x.request.Body.(*kmsg.OffsetFetchRequest)
	if !b.lifecycle.holdsLease() {
		x.respond(offsetFetchError(req, kerr.NotCoordinator.Code))
		return
	}
	x.respond(b.groups.coordinator.OffsetFetch(req))
}

// offsetFetchError answers every group asked about with code: the
// top-level error from v2, the group's from v8, and each partition's
// before v2, where nothing else carries it.
func offsetFetchError(req *kmsg.OffsetFetchRequest, code int16) *kmsg.OffsetFetchResponse {
	resp := req.ResponseKind().(*kmsg.OffsetFetchResponse)
	if req.Version >= 8 {
		for _, rg := range req.Groups {
			answer := kmsg.NewOffsetFetchResponseGroup()
			answer.Group = rg.Group
			answer.ErrorCode = code
			resp.Groups = append(resp.Groups, answer)
		}
		return resp
	}
	resp.ErrorCode = code
	for _, rt := range req.Topics {
		answerTopic := kmsg.NewOffsetFetchResponseTopic()
		answerTopic.Topic = rt.Topic
		for _, partition := range rt.Partitions {
			answerPartition := kmsg.NewOffsetFetchResponseTopicPartition()
			answerPartition.Partition = partition
			answerPartition.Offset = -1
			answerPartition.ErrorCode = code
			answerTopic.Partitions = append(answerTopic.Partitions, answerPartition)
		}
		resp.Topics = append(resp.Topics, answerTopic)
	}
	return resp
}
