package broker

// OffsetFetch (key 9), versions 1-8.
//
// Handed to the group coordinator (core/group, offset_fetch.go): the
// committed offsets of the partitions asked for (-1 where there is none),
// never a commit still on its way to the log.
//
// Version notes: v2 asks for all of a group's offsets with a null topic
// list and adds a top-level error; v5 answers leader epochs; v6 is
// flexible; v7 RequireStable (every offset is stable without
// transactions); v8 (KIP-709) asks about several groups at once.

import "github.com/twmb/franz-go/pkg/kmsg"

func init() {
	registerAPI(&api{key: 9, advertisedMin: 1, honouredMin: 1, max: 8, handle: (*Broker).handleOffsetFetch})
}

func (b *Broker) handleOffsetFetch(x *exchange) {
	x.respond(b.groups.coordinator.OffsetFetch(x.request.Body.(*kmsg.OffsetFetchRequest)))
}
