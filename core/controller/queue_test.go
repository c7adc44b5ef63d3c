package controller

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestOperationsRunOneAtATime holds each proposal until released: a second
// creation of the same name must wait for the first to commit, and is then
// judged against the committed image.
func TestOperationsRunOneAtATime(t *testing.T) {
	tc := newTestController(t, Config{}, 1)
	tc.proposer.holding = true
	var answers []*kmsg.CreateTopicsResponse
	create := func(name string) {
		req := kmsg.NewPtrCreateTopicsRequest()
		req.Version = 7
		req.Topics = append(req.Topics, topicRequest(name, 1, 1))
		tc.c.CreateTopics(req, func(resp *kmsg.CreateTopicsResponse) { answers = append(answers, resp) })
	}
	create("same")
	create("same")
	create("other")
	if len(tc.proposer.pending) != 1 || len(answers) != 0 {
		t.Fatalf("%d proposals pending and %d answers before any commit; want 1 and 0", len(tc.proposer.pending), len(answers))
	}
	tc.proposer.release(t)
	// The first is answered; the second ran, changing nothing, and waits
	// for its no-op barrier to commit before it answers.
	if len(answers) != 1 || len(tc.proposer.pending) != 1 || tc.proposer.pending[0].records[0].NoOp == nil {
		t.Fatalf("%d answers and %d pending after the first commit; want 1 and the second's barrier", len(answers), len(tc.proposer.pending))
	}
	requireCode(t, "first", answers[0].Topics[0].ErrorCode, answers[0].Topics[0].ErrorMessage, nil)
	tc.proposer.release(t)
	// The second is answered; the third is now waiting for its commit.
	if len(answers) != 2 || len(tc.proposer.pending) != 1 {
		t.Fatalf("%d answers and %d pending after the barrier; want 2 and 1", len(answers), len(tc.proposer.pending))
	}
	requireCode(t, "second", answers[1].Topics[0].ErrorCode, answers[1].Topics[0].ErrorMessage, kerr.TopicAlreadyExists)
	tc.proposer.release(t)
	if len(answers) != 3 || answers[2].Topics[0].Topic != "other" || answers[2].Topics[0].ErrorCode != 0 {
		t.Fatalf("answers %+v", answers)
	}
	if got := tc.c.Image().TopicNames(); len(got) != 2 {
		t.Fatalf("topics %v", got)
	}
}

func TestOperationQueueIsBounded(t *testing.T) {
	tc := newTestController(t, Config{}, 1)
	tc.proposer.holding = true
	answered := 0
	req := kmsg.NewPtrCreatePartitionsRequest()
	for i := 0; i < operationsQueuedMax+1; i++ {
		// The first runs and waits for its commit; the rest queue.
		create := kmsg.NewPtrCreateTopicsRequest()
		create.Topics = append(create.Topics, topicRequest("t", 1, 1))
		tc.c.CreateTopics(create, func(*kmsg.CreateTopicsResponse) { answered++ })
	}
	if answered != 0 {
		t.Fatalf("%d answered while the queue filled", answered)
	}
	var refused *kmsg.CreatePartitionsResponse
	req.Topics = append(req.Topics, growTo("t", 2))
	tc.c.CreatePartitions(req, func(resp *kmsg.CreatePartitionsResponse) { refused = resp })
	if refused == nil {
		t.Fatal("a request to a full queue was not answered at once")
	}
	requireCode(t, "full", refused.Topics[0].ErrorCode, refused.Topics[0].ErrorMessage, kerr.RequestTimedOut)
	// Each of the rest finds the topic created and commits a barrier
	// before it answers.
	for len(tc.proposer.pending) > 0 {
		tc.proposer.release(t)
	}
	if answered != operationsQueuedMax+1 {
		t.Fatalf("%d of %d queued operations answered", answered, operationsQueuedMax+1)
	}
}
