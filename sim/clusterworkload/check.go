package clusterworkload

import (
	"fmt"
	"slices"
	"strings"

	"sluice/jepsen/checker"
	"sluice/jepsen/history"
)

// lossPermitted lists the partitions whose acknowledged writes the
// configuration may lose, and so the checker must not count as lost:
//   - every partition of a page-cache topic, once any node lost its page
//     cache: in the simulator every crash is its machine's (its unsynced
//     writes are gone), and a write acknowledged from page caches is lost
//     when every replica holding it loses its page cache before a sync,
//     at once (a power loss of every node) or one after the other faster
//     than re-replication;
//   - every partition of a topic that allowed unclean leader elections
//     at some point (created so, or altered: alters.go) whose leader a
//     controller chose outside the ISR: that replica takes back what
//     only the ISR had.
//
// An acks=1 producer's writes may be lost anywhere (lossySenders): the
// leader acknowledges before any follower has the write, and a failover
// loses it. The acks=all writes beside them in a partition may not.
func (r *run) lossPermitted() []history.TopicPartition {
	pageCacheLost := r.machineCrashes() > 0
	var permitted []history.TopicPartition
	for _, tp := range r.allPartitions() {
		t, _ := r.scenario.Topic(tp.Topic)
		if r.electedUncleanly(tp) || (t.PageCache && pageCacheLost) {
			permitted = append(permitted, tp)
		}
	}
	return permitted
}

// lossySenders lists the history processes of the acks=1 producers.
func (r *run) lossySenders() []int {
	var processes []int
	for _, p := range r.producers {
		if p.producer.Config().Acks == 1 {
			processes = append(processes, p.producer.Processes()...)
		}
	}
	return processes
}

// uncleanElected lists, in allPartitions' order, the partitions
// electedUncleanly.
func (r *run) uncleanElected() []history.TopicPartition {
	var elected []history.TopicPartition
	for _, tp := range r.allPartitions() {
		if r.electedUncleanly(tp) {
			elected = append(elected, tp)
		}
	}
	return elected
}

// electedUncleanly reports whether a controller chose a leader of tp
// outside the ISR while its topic allowed unclean leader elections (at
// some point: created so, altered so, or an unclean ElectLeaders). A
// controller's canary that elects so without any of these does not count:
// that is the bug the checks must catch.
func (r *run) electedUncleanly(tp history.TopicPartition) bool {
	return r.observer.uncleanElected[tp] && r.uncleanAllowed(tp.Topic)
}

// machineCrashes counts node crashes and halts.
func (r *run) machineCrashes() int {
	total := 0
	for _, n := range r.nodes {
		total += n.crashes + n.halts
	}
	return total
}

// checkHistory judges the whole history with every jepsen checker. With
// finalDrain, the drain read every partition to its end, so an
// acknowledged value nobody read is lost.
func (r *run) checkHistory(finalDrain bool) {
	for _, d := range r.producers {
		if n := d.producer.Stats().UnplacedWrites; n > 0 {
			r.fail("unplaced-write", fmt.Sprintf("%s was told %d times that a batch was written, with no offset", d.settings.Name, n))
			return
		}
	}
	ops := settleUnreadUnknownCommits(withoutEndClaims(r.recorder.History()))
	options := checker.Options{
		LossPermitted:   r.lossPermitted(),
		LossySenders:    r.lossySenders(),
		Deleted:         r.deletedRecords(),
		DeletesAnswered: r.deletions,
		UncleanElected:  r.uncleanElected(),
		FinalDrain:      finalDrain,
		SearchSteps:     r.searchSteps,
	}
	r.recordChecked(ops, options)
	report := checker.Check(ops, options)
	r.checkSummary = report.Summary()
	r.note("check " + r.checkSummary)
	for _, class := range report.Classes {
		r.counts.lossPermitted += class.Permitted
	}
	if check, detail, failed := report.Violation(); failed {
		r.fail(check, detail)
	}
}

// withoutEndClaims forgets where empty polls fetched from. simclient
// records an empty poll's position when the broker answered with a high
// watermark exactly there, a claim that the log ends there, which the
// log's linearizability search holds the cluster to. A cluster cannot keep
// that claim: a leader deposed behind a partition keeps answering with
// its last high watermark until it hears of its successor (Kafka has no
// leader leases), and a new leader answers with the high watermark it had
// as a follower, which may lag its predecessor's, until its followers
// fetch from it. Records read are still checked against every append;
// only an empty answer no longer says where the log ends. Reported to the
// lead as a design question; a read-fencing core can drop this.
func withoutEndClaims(ops []history.Op) []history.Op {
	emptyPoll := func(poll history.Poll) bool { return len(poll.Records) == 0 }
	for i := range ops {
		op := &ops[i]
		if op.F != history.FuncPoll || !slices.ContainsFunc(op.Polls, emptyPoll) {
			continue // nothing to forget: keep sharing the recorded polls
		}
		polls := slices.Clone(op.Polls)
		for j := range polls {
			if len(polls[j].Records) == 0 {
				polls[j].From = history.OffsetUnknown
			}
		}
		op.Polls = polls
	}
	return ops
}

// settleUnreadUnknownCommits marks as failed every commit whose outcome is
// unknown (info) and which no read of the committed offsets can have
// seen: none of its offsets was read back after it began. The
// committed-offset register check lets an unknown write take effect at
// any point after it began, which costs its search a factor of two per
// such write; a coordinator failing over leaves dozens, and porcupine
// ran out of its budget on a hundred operations. A write no later read
// returned can always take effect last, after every read of its value,
// where it changes nothing any read saw; so treating it as never applied
// changes no verdict. Only the commit checks look at commits (the
// stale-generation one at acknowledged ones only).
func settleUnreadUnknownCommits(ops []history.Op) []history.Op {
	type committed struct {
		group     string
		partition history.TopicPartition
		offset    int64
	}
	lastRead := map[committed]int64{} // when a read last returned it
	for _, op := range ops {
		if op.F == history.FuncFetchCommitted && op.Type == history.OK {
			for _, c := range op.Commits {
				lastRead[committed{c.Group, c.Partition, c.Offset}] = op.Time
			}
		}
	}
	invoked := map[int]int{} // process → index of its commit in flight
	for i, op := range ops {
		if op.F != history.FuncCommit {
			continue
		}
		switch op.Type {
		case history.Invoke:
			invoked[op.Process] = i
		case history.Info:
			invoke := ops[invoked[op.Process]]
			seen := false
			for _, c := range invoke.Commits {
				at, read := lastRead[committed{c.Group, c.Partition, c.Offset}]
				seen = seen || (read && at > invoke.Time)
			}
			if !seen {
				ops[i].Type = history.Fail
				ops[i].Error = "unknown outcome, never read back: " + op.Error
			}
		}
	}
	return ops
}

// checkGroupSawEverything judges what each group alone read: the sends to
// its topic and its members' operations. The group drained to every
// partition's end, so an acknowledged value none of its members polled
// is one the group skipped: "group-unseen", or "group-lost-write" when a
// member polled past it.
func (r *run) checkGroupSawEverything() {
	// The history is scanned in place (Recorder.Each), not copied
	// whole: each group keeps only its own ops, in a history of their
	// own.
	//
	// A send's completion may carry no payload (an info, say), so sends
	// are told apart by the process that invoked them: a producer lane's
	// process writes one partition all its life.
	topicOf := map[int]string{}
	r.recorder.Each(func(_ int, op *history.Op) {
		if op.F == history.FuncSend && op.Type == history.Invoke && len(op.Sends) > 0 {
			topicOf[op.Process] = op.Sends[0].Partition.Topic
		}
	})
	for _, g := range r.groups {
		members := map[int]bool{}
		for _, m := range g.members {
			for _, process := range m.consumer.Processes() {
				members[process] = true
			}
		}
		var original []int // the whole history's index of each op kept
		r.recorder.Each(func(index int, op *history.Op) {
			if (op.F == history.FuncSend && topicOf[op.Process] == g.settings.Topic) || members[op.Process] {
				original = append(original, index)
			}
		})
		ops := make([]history.Op, len(original))
		for i, index := range original {
			ops[i] = r.recorder.Op(index)
			ops[i].Index = i
		}
		report := checker.CheckLostWrites(ops, checker.Options{LossPermitted: r.lossPermitted(), LossySenders: r.lossySenders(), Deleted: r.deletedRecords(), FinalDrain: true})
		if report.Error != "" {
			r.fail("group-history", report.Error)
			return
		}
		for _, anomaly := range []checker.Anomaly{checker.LostWrite, checker.Unseen} {
			class, _ := report.Class(anomaly)
			if class.Failures == 0 {
				continue
			}
			var examples []string
			for _, finding := range class.FailureExamples(checker.ViolationExamplesMax) {
				var whole []int
				for _, op := range finding.Ops {
					whole = append(whole, original[op])
				}
				examples = append(examples, fmt.Sprintf("%s (ops %v of the whole history)", finding, whole))
			}
			r.fail("group-"+string(anomaly), fmt.Sprintf("group %s: %d failures; %s", g.settings.Name, class.Failures, strings.Join(examples, "; ")))
			return
		}
	}
}
