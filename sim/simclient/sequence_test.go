package simclient

import (
	"errors"
	"testing"
	"time"

	"sluice/core/batch"
	"sluice/jepsen/history"
	"sluice/sim/simdisk"
)

// A failed send hands its sequence to the next batch only when no batch
// was built after it. In cluster seed 4622480 the first batch of a new
// producer id waited on the old leader's connection while the two after
// it went to the new leader, which took them (it held no state of the
// producer, so any sequence goes) and acknowledged them; the first then
// failed, never written, and its sequence went to the next batch, whose
// records the broker answered as duplicates of the acknowledged ones, with
// their offsets. Here the lane's bookkeeping is driven directly: three
// batches built, the last two finished ok, then the first failed.
func TestAFailedSendKeepsItsSequenceOnlyWhenNoLaterBatchTookOne(t *testing.T) {
	c := newCluster(t, 7, simdisk.Faults{})
	c.createTopic()
	p := NewProducer(c.client("p1"), ProducerConfig{Acks: -1, Idempotent: true, InFlightMax: 5}, c.recorder, c.processes)
	warm := c.send(p, 0, "warm")
	c.runUntil(time.Minute, "a producer id", func() bool { return warm.Type != 0 })
	if warm.Type != history.OK {
		t.Fatalf("first send: %+v", *warm)
	}
	generation := p.identity.generation

	// Built in order, out before any answer, as in flight.
	sends := make([]*produce, 3)
	for i, value := range []string{"a", "b", "c"} {
		c.send(p, 0, value)
		l := p.lanes[tp(0)]
		sends[i] = l.sends[len(l.sends)-1]
		p.build(sends[i])
	}
	for i, s := range sends {
		if s.generation != generation || s.sequence != int32(1+i) {
			t.Fatalf("send %d built at generation %d sequence %d, want %d and %d", i, s.generation, s.sequence, generation, 1+i)
		}
	}
	p.finish(sends[1], SendResult{Type: history.OK, Offset: 2})
	p.finish(sends[2], SendResult{Type: history.OK, Offset: 3})
	p.finish(sends[0], SendResult{Type: history.Fail, Err: errors.New("not delivered")})
	if p.identity.id != batch.NoProducerID {
		t.Fatalf("after the failure the producer still sends as id %d, whose sequences 2 and 3 the broker holds: a new batch would take sequence %d", p.identity.id, p.lanes[tp(0)].sequence)
	}

	// Without a later batch, the failed one's sequence is reused.
	next := c.send(p, 0, "d")
	c.runUntil(time.Minute, "a new producer id", func() bool { return next.Type != 0 })
	if next.Type != history.OK || p.identity.generation == generation {
		t.Fatalf("send after the failure: %+v at generation %d, want ok under a new one", *next, p.identity.generation)
	}
	generation = p.identity.generation
	c.send(p, 0, "e")
	l := p.lanes[tp(0)]
	lone := l.sends[len(l.sends)-1]
	p.build(lone)
	p.finish(lone, SendResult{Type: history.Fail, Err: errors.New("not delivered")})
	if p.identity.generation != generation || p.identity.id == batch.NoProducerID || l.sequence != lone.sequence {
		t.Fatalf("a failed last batch: identity %d (generation %d), next sequence %d; want the same identity and sequence %d again", p.identity.id, p.identity.generation, l.sequence, lone.sequence)
	}
}
