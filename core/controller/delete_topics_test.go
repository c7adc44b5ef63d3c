package controller

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func TestDeleteTopicsByName(t *testing.T) {
	tc := newTestController(t, Config{}, 1)
	tc.mustCreate("keep", 1, 1)
	gone := tc.mustCreate("gone", 2, 1, "retention.ms", "10")
	tc.mustCreate("__consumer_offsets", 1, 1)
	resp := tc.deleteTopics("gone", "missing", "__consumer_offsets")
	want := []*kerr.Error{nil, kerr.UnknownTopicOrPartition, nil}
	for i, w := range want {
		requireCode(t, deref(resp.Topics[i].Topic), resp.Topics[i].ErrorCode, resp.Topics[i].ErrorMessage, w)
	}
	if resp.Topics[0].TopicID != [16]byte(gone.ID) {
		t.Fatalf("answer names id %x, want %x", resp.Topics[0].TopicID, gone.ID)
	}
	image := tc.c.Image()
	if len(image.Topics) != 1 || image.Topics["keep"] == nil || image.TopicsByID[gone.ID] != nil || image.TopicConfigs("gone") != nil {
		t.Fatalf("after deletion: topics %v, configs of gone %v", image.TopicNames(), image.TopicConfigs("gone"))
	}
	// The name is free again, and the new topic is a new topic.
	again := tc.mustCreate("gone", 1, 1)
	if again.ID == gone.ID || len(tc.c.Image().TopicConfigs("gone")) != 0 {
		t.Fatalf("re-created topic %+v keeps the old id or configs", again)
	}
}

func TestDeleteTopicsByID(t *testing.T) {
	tc := newTestController(t, Config{}, 1)
	a := tc.mustCreate("a", 1, 1)
	b := tc.mustCreate("b", 1, 1)
	c := tc.mustCreate("c", 1, 1)
	name := func(s string) *string { return &s }
	byID := func(id [16]byte) kmsg.DeleteTopicsRequestTopic { return kmsg.DeleteTopicsRequestTopic{TopicID: id} }
	req := kmsg.NewPtrDeleteTopicsRequest()
	req.Version = 6
	req.Topics = []kmsg.DeleteTopicsRequestTopic{
		byID(a.ID),
		{Topic: name("b")},
		{Topic: name("c"), TopicID: c.ID}, // both: refused
		{},                                // neither: refused
		byID([16]byte{9}),                 // unknown id
		byID(b.ID),                        // b also by name: refused
	}
	resp := call(t, func(done func(*kmsg.DeleteTopicsResponse)) { tc.c.DeleteTopics(req, done) })
	want := []*kerr.Error{nil, kerr.InvalidRequest, kerr.InvalidRequest, kerr.InvalidRequest, kerr.UnknownTopicID, kerr.InvalidRequest}
	for i, w := range want {
		requireCode(t, deref(resp.Topics[i].Topic), resp.Topics[i].ErrorCode, resp.Topics[i].ErrorMessage, w)
	}
	if deref(resp.Topics[0].Topic) != "a" || resp.Topics[0].TopicID != [16]byte(a.ID) {
		t.Fatalf("deletion by id answered %+v", resp.Topics[0])
	}
	if got := tc.c.Image().TopicNames(); len(got) != 2 || got[0] != "b" || got[1] != "c" {
		t.Fatalf("topics %v, want b and c", got)
	}
}

func TestDeleteTopicsRefusesDuplicateNames(t *testing.T) {
	tc := newTestController(t, Config{}, 1)
	tc.mustCreate("twice", 1, 1)
	resp := tc.deleteTopics("twice", "twice")
	for _, answer := range resp.Topics {
		requireCode(t, "twice", answer.ErrorCode, answer.ErrorMessage, kerr.InvalidRequest)
	}
	if tc.c.Image().Topics["twice"] == nil {
		t.Fatal("a refused deletion deleted")
	}
}
