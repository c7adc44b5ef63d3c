package replica

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	corelog "sluice/core/log"
)

// These tests replay the scenarios of KIP-101 ("Alter replication protocol
// to use leader epoch rather than high watermark for truncation") and
// KIP-279 ("Fix log divergence between leader and follower after fast
// leader fail over"), each as the KIP tells it, with the harness playing
// the controller's elections.

// appendUnreplicated appends values on the leader with acks=1 and runs
// until the leader's own append is synced.
func (h *harness) appendUnreplicated(values ...string) {
	h.t.Helper()
	p := h.partition(h.leader)
	if _, err := p.AppendAsLeader(h.batch(-1, 0, 0, values...), false); err != nil {
		h.t.Fatalf("appending %v: %v", values, err)
	}
	h.runUntil("the leader's append synced", func() bool { return p.SyncedOffset() == p.LogEndOffset() })
}

// awaitLeader runs until the leader's replica serves (its recovered log
// is durable).
func (h *harness) awaitLeader() {
	h.t.Helper()
	h.runUntil("the leader serves", func() bool { return h.partition(h.leader).IsLeader() })
}

// KIP-101, scenario 1: a follower whose high watermark lags restarts. If it
// truncated to its high watermark it would cut records that are committed,
// and become leader without them. With epochs it keeps them.
func TestRestartedFollowerKeepsCommittedRecords(t *testing.T) {
	for _, canary := range []bool{false, true} {
		name := "epochs"
		if canary {
			name = "truncate-to-hw canary"
		}
		t.Run(name, func(t *testing.T) {
			var canaries []string
			if canary {
				canaries = append(canaries, CanaryTruncateToHighWatermark)
			}
			h := newHarness(t, 2, nil, canaries...)
			h.setLeader(1, []int32{1, 2})
			_, m1 := h.produce("m1")
			_, m2 := h.produce("m2")
			h.runUntil("both acknowledged", func() bool { return m1.answered && m2.answered })

			// B restarts: its high watermark, kept in memory, starts
			// again at its log start.
			h.crash(2)
			h.restart(2)
			// A dies before B fetches anything; B is elected.
			h.crash(1)
			h.setLeader(2, []int32{2})
			h.awaitLeader()
			got := h.values(2)
			want := []string{"0:m1@1", "1:m2@1"}
			if !canary && !slices.Equal(got, want) {
				t.Fatalf("the new leader's log %v, want the acknowledged %v", got, want)
			}
			if canary && len(got) != 0 {
				t.Fatalf("with the canary the new leader kept %v: the canary does not plant the KIP-101 bug", got)
			}
		})
	}
}

// KIP-101, scenario 2: both replicas crash; the one that comes back first
// leads a new epoch and writes at an offset where the other had written an
// uncommitted record in the old epoch. The other must find and cut that
// divergence, or the two logs hold different records at one offset.
func TestFollowerCutsADivergentTailAfterAPowerLoss(t *testing.T) {
	h := newHarness(t, 2, nil)
	h.setLeader(1, []int32{1, 2})
	_, m1 := h.produce("m1")
	h.runUntil("m1 acknowledged", func() bool { return m1.answered })
	h.nodes[2].cut = true
	h.appendUnreplicated("m2")

	h.crash(1)
	h.crash(2)
	h.nodes[2].cut = false
	h.restart(2)
	h.setLeader(2, []int32{2})
	h.awaitLeader()
	h.appendUnreplicated("m3")

	h.restart(1)
	want := []string{"0:m1@1", "1:m3@2"}
	h.runUntil("node 1 cut m2 and replicated m3", func() bool { return slices.Equal(h.values(1), want) })
	h.requireSameLogs(1, 2)
}

// KIP-279: leaders change faster than followers catch up, so a follower
// holds records of an epoch the current leader's log ended earlier, or
// never had. Each follower cuts exactly its divergent tail: A, whose old
// epoch 1 ended at offset 1 in the leader's log, and B, whose epoch 2 ended
// at offset 2 there.
func TestFollowersConvergeAfterFastLeaderChanges(t *testing.T) {
	h := newHarness(t, 3, nil)
	h.manualISR = true
	h.setLeader(1, []int32{1, 2, 3})
	_, x := h.produce("x")
	h.runUntil("x acknowledged", func() bool { return x.answered })

	// Epoch 1: A (1) writes two more records nobody replicates.
	h.nodes[2].cut, h.nodes[3].cut = true, true
	h.appendUnreplicated("a1")
	h.appendUnreplicated("a2")

	// Epoch 2: B (2) leads; C (3) replicates only its first record; A
	// is cut off.
	h.nodes[1].cut, h.nodes[2].cut, h.nodes[3].cut = true, false, false
	h.setLeader(2, []int32{2, 3})
	h.awaitLeader()
	h.appendUnreplicated("b1")
	h.runUntil("C has b1", func() bool { return h.end(3) == 2 && h.partition(3).SyncedOffset() == 2 })
	h.nodes[3].cut = true
	h.appendUnreplicated("b2")

	// Epoch 3: C leads and writes at offset 2.
	h.nodes[3].cut = false
	h.nodes[2].cut = true
	h.setLeader(3, []int32{3})
	h.awaitLeader()
	h.appendUnreplicated("c2")

	// A and B come back as followers of C.
	h.nodes[1].cut, h.nodes[2].cut = false, false
	h.runUntil("everyone converged", func() bool { return h.end(1) == 3 && h.end(2) == 3 })
	h.run(20 * time.Millisecond)
	h.requireSameLogs(1, 2, 3)
	if got, want := h.values(1), []string{"0:x@1", "1:b1@2", "2:c2@3"}; !slices.Equal(got, want) {
		t.Fatalf("logs %v, want %v", got, want)
	}
}

// KIP-279, the follower that never saw the leader's epoch: the leader
// (epoch 4, which has written nothing yet) answers that its log's epoch 2
// ends at offset 2; A's log has no epoch 2 (it led epoch 3 instead), so it
// cuts at the end of its epoch 1, asks again with epoch 1, and then
// replicates epoch 2's record.
func TestFollowerWithoutTheLeadersEpochAsksAgain(t *testing.T) {
	h := newHarness(t, 2, map[string]string{"min.insync.replicas": "2"})
	h.manualISR = true
	h.setLeader(1, []int32{1, 2})
	_, x := h.produce("x")
	h.runUntil("x acknowledged", func() bool { return x.answered })
	h.runUntil("B knows x is committed", func() bool { return h.partition(2).HighWatermark() == 1 })

	h.nodes[1].cut = true
	h.setLeader(2, []int32{2})
	h.awaitLeader()
	h.appendUnreplicated("b1")

	h.nodes[1].cut, h.nodes[2].cut = false, true
	h.setLeader(1, []int32{1})
	h.awaitLeader()
	h.appendUnreplicated("a1", "a2")

	h.nodes[2].cut = false
	h.nodes[1].cut = false
	h.setLeader(2, []int32{2})
	h.awaitLeader()
	h.runUntil("A converged", func() bool {
		return slices.Equal(h.values(1), []string{"0:x@1", "1:b1@2"})
	})
	h.requireSameLogs(1, 2)
}

// A follower never cuts below its high watermark under the durable
// default (an assertion: it would mean a committed record is lost), even
// where the topic allows unclean elections but none happened. It cuts,
// and logs, where the partition had an unclean election (the metadata
// says so), whatever the config says by now: an operator turns it on to
// bring a partition back and off again once it is. And in page-cache
// mode, where a leader that lost power can come back without records it
// had counted.
func TestFollowerNeverTruncatesBelowItsHighWatermark(t *testing.T) {
	for _, c := range []struct {
		name         string
		configs      map[string]string
		uncleanEpoch int32
		cuts         bool
	}{
		{"durable", map[string]string{}, 0, false},
		{"unclean allowed, none happened", map[string]string{"unclean.leader.election.enable": "true"}, 0, false},
		{"after an unclean election, the config off again", map[string]string{"unclean.leader.election.enable": "false"}, 1, true},
		{"page-cache mode", map[string]string{"flush.messages": "1000"}, 0, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			h := newHarness(t, 2, c.configs)
			h.setLeader(1, []int32{1, 2})
			_, m1 := h.produce("m1")
			_, m2 := h.produce("m2")
			h.runUntil("acknowledged", func() bool { return m1.answered && m2.answered })
			follower := h.partition(2)
			h.runUntil("the follower knows the high watermark", func() bool { return follower.HighWatermark() == 2 })
			follower.NoteUncleanElection(c.uncleanEpoch)
			position, ready := follower.FetchPosition()
			if !ready {
				t.Fatal("the follower is not ready to fetch")
			}
			diverging := FetchAnswer{DivergingEpoch: 1, DivergingEndOffset: 1, HighWatermark: -1, LogStartOffset: 0}
			panicked := func() (message string) {
				defer func() {
					if r := recover(); r != nil {
						message = r.(string)
					}
				}()
				follower.HandleFetchAnswer(position, diverging)
				return ""
			}()
			if !c.cuts {
				if !strings.Contains(panicked, "below its high watermark") {
					t.Fatalf("a cut below the high watermark did not trip the assertion (panic %q)", panicked)
				}
				return
			}
			if panicked != "" {
				t.Fatal(panicked)
			}
			if end, hw := follower.LogEndOffset(), follower.HighWatermark(); end != 1 || hw != 1 {
				t.Fatalf("log end %d, high watermark %d after cutting to 1", end, hw)
			}
		})
	}
}

// A follower whose log DeleteRecords emptied keeps the epoch in force at
// its start, with no batch in it (epoch 2 at offset 2 here). A leader that
// never had epoch 2, elected uncleanly, answers its fetch with epoch 1
// ending at 2: a cut of nothing. Kafka's follower forgets the empty epoch
// (its truncateTo always trims the epoch cache from the log end) and
// fetches on. Refusing the answer fetched with epoch 2 again, for good, and
// the follower never rejoined the ISR (cluster seed 1493525).
func TestFollowerForgetsAnEpochThatHoldsNoBatch(t *testing.T) {
	h := newHarness(t, 3, map[string]string{"unclean.leader.election.enable": "true"})
	h.setLeader(1, []int32{1, 2, 3})
	_, x := h.produce("x")
	h.runUntil("x acknowledged", func() bool { return x.answered })

	// a1, in epoch 1, reaches node 3 but not node 2.
	h.nodes[2].cut = true
	h.appendUnreplicated("a1")
	h.runUntil("node 3 has a1", func() bool { return h.end(3) == 2 })

	// Node 2 leads epoch 2 alone, writes b1 where the others have a1, and
	// deletes everything it has.
	h.nodes[1].cut, h.nodes[2].cut, h.nodes[3].cut = true, false, true
	h.setLeader(2, []int32{2})
	h.awaitLeader()
	h.appendUnreplicated("b1")
	if err := h.partition(2).log.AdvanceStartOffset(2); err != nil {
		t.Fatal(err)
	}
	h.run(10 * time.Millisecond)
	if got := h.partition(2).log.EpochEntries(); !slices.Equal(got, []corelog.EpochEntry{{Epoch: 2, StartOffset: 2}}) {
		t.Fatalf("node 2's epochs %v, want only epoch 2 at its start 2", got)
	}

	// Node 3 is elected without node 2's epoch.
	h.nodes[1].cut, h.nodes[3].cut = false, false
	h.setLeader(3, []int32{3, 1})
	h.awaitLeader()
	_, c := h.produce("c")
	h.runUntil("c acknowledged", func() bool { return c.answered })
	h.runUntil("node 2 has c", func() bool { return slices.Equal(h.values(2), []string{"2:c@3"}) })
	h.runUntil("node 2 back in the ISR", func() bool { return slices.Contains(h.partition(3).ISR(), 2) })
	if got := h.partition(2).log.EpochEntries(); !slices.Equal(got, []corelog.EpochEntry{{Epoch: 3, StartOffset: 2}}) {
		t.Fatalf("node 2's epochs %v, want only epoch 3 at 2", got)
	}
	if !slices.Equal(h.values(3), []string{"0:x@1", "1:a1@1", "2:c@3"}) {
		t.Fatalf("node 3's log %v", h.values(3))
	}
	h.requireSameLogs(1, 3)
}

// A leader cut off from the rest appends an idempotent batch that never
// commits; the next leader commits another record at its offset, and
// deletes below the next one. KIP-279's answer to the old leader, now a
// follower, for an epoch below every one the leader still has, is the
// leader's log start: a cut there would keep the divergent batch below
// the start, and the producer state built from it. Leading again, the
// replica would answer the batch's retry as a duplicate at an offset that
// holds another record (cluster seed 1606352). It restarts its log at the
// leader's start instead, and takes the retry as new.
func TestFollowerRestartsRatherThanKeepDivergentBatchesBelowTheLeadersStart(t *testing.T) {
	requireRetryTakenAnewAtTheLeadersStart(t, "y")
}

// Cluster seed 2005452: as above, but the new leader commits a record at
// each of the old leader's divergent offsets before it deletes, so the
// follower's fetch comes at the leader's log start itself. KIP-279 answers
// its last epoch, below every one the leader still has, with that start as
// the epoch's end: no divergence at all. The follower's divergent batches
// lie above its high watermark, in an epoch older than the leader's; it
// must restart at the leader's start, not take the leader's high watermark
// over them and keep the producer state they built.
func TestFollowerRestartsRatherThanKeepAnUncheckedTailBelowTheLeadersStart(t *testing.T) {
	requireRetryTakenAnewAtTheLeadersStart(t, "y", "v")
}

// requireRetryTakenAnewAtTheLeadersStart plays both tests above. Node 1,
// leading and cut off, appends producer 7's first batch (z) at 1 and w at
// 2, neither committed. Node 2 then leads, commits committed from 1 on,
// one batch each, and deletes below its end. Node 1 comes back, must
// restart its log at that start, rejoin the ISR, and, leading again, take
// producer 7's retry of z as a new batch at the start, not as a duplicate
// of the batch that never committed.
func requireRetryTakenAnewAtTheLeadersStart(t *testing.T, committed ...string) {
	h := newHarness(t, 3, nil)
	h.setLeader(1, []int32{1, 2, 3})
	_, x := h.produce("x")
	h.runUntil("x acknowledged", func() bool { return x.answered })

	h.nodes[2].cut, h.nodes[3].cut = true, true
	const producer = 7
	if _, err := h.partition(1).AppendAsLeader(h.batch(producer, 0, 0, "z"), false); err != nil {
		t.Fatal(err)
	}
	h.appendUnreplicated("w")

	h.nodes[1].cut, h.nodes[2].cut, h.nodes[3].cut = true, false, false
	h.setLeader(2, []int32{2, 3})
	h.awaitLeader()
	for _, value := range committed {
		_, ack := h.produce(value)
		h.runUntil(value+" acknowledged", func() bool { return ack.answered && ack.err == nil })
	}
	start := h.end(2)
	if err := h.partition(2).log.AdvanceStartOffset(start); err != nil {
		t.Fatal(err)
	}
	h.run(10 * time.Millisecond)

	h.nodes[1].cut = false
	h.runUntil("node 1 at the leader's start", func() bool {
		p := h.partition(1)
		return p.LogStartOffset() == start && p.LogEndOffset() == start
	})
	h.runUntil("node 1 back in the ISR", func() bool { return slices.Contains(h.partition(2).ISR(), 1) })

	h.setLeader(1, []int32{1, 2, 3})
	h.awaitLeader()
	retry, err := h.partition(1).AppendAsLeader(h.batch(producer, 0, 0, "z"), false)
	if err != nil {
		t.Fatal(err)
	}
	if retry.Duplicate || retry.BaseOffset != start {
		t.Fatalf("the retry was answered %+v: want it appended anew at %d, not a duplicate of the uncommitted batch", retry, start)
	}
	h.runUntil("every replica has z at the start", func() bool {
		return h.end(2) == start+1 && h.end(3) == start+1
	})
	if want := []string{fmt.Sprintf("%d:z@3", start)}; !slices.Equal(h.values(1), want) {
		t.Fatalf("node 1's log %v, want %v", h.values(1), want)
	}
	h.requireSameLogs(1, 2, 3)
}
