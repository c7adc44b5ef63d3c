package brokerworkload

import (
	"fmt"
	"slices"
	"time"

	"sluice/jepsen/history"
)

// The group's part of the liveness phase: once the final drain has found
// every partition's end, the group must settle (every consumer stable in
// one generation, every partition assigned to exactly one of them) and
// drain through the group: each partition's committed offset at its end,
// as the owner's acknowledged commits say and as reading them back from
// the coordinator confirms.

const (
	// groupLivenessMax bounds it, from the end of the final drain. A
	// consumer that crashed is expired after its session timeout (at
	// most sessionTimeoutDrawMax), a rebalance waits at most a rebalance
	// timeout (rebalanceTimeoutDrawMax) for members to rejoin and sync,
	// and reading to the end takes polls of at most a few hundred
	// milliseconds: a few rebalances' worth of slack on top.
	groupLivenessMax = 30 * time.Second
	// groupCheckInterval is how often the workload looks at the group
	// while it settles.
	groupCheckInterval = 50 * time.Millisecond
)

// groupDrain is the group's convergence under way.
type groupDrain struct {
	// targets are every partition's end, from the final drain.
	targets map[history.TopicPartition]int64
	// round counts attempts at reading the committed offsets back; a
	// read answered for an older round is ignored.
	round int
	// reading counts read-backs of this round still unanswered, and
	// readGeneration is the generation they were asked in.
	reading        int
	readGeneration int32
	readMismatch   bool
	confirmed      bool
	// problem says what the group still lacks, for a failure's detail.
	problem string
}

// convergeGroup waits for the group to settle and drain to targets.
func (r *run) convergeGroup(targets map[history.TopicPartition]int64) *violation {
	deadline := r.kernel.Now() + int64(groupLivenessMax)
	drain := &groupDrain{targets: targets, problem: "not looked at yet"}
	var look func()
	look = func() {
		if drain.confirmed {
			return
		}
		r.lookAtGroup(drain)
		r.kernel.Schedule(int64(groupCheckInterval), nil, "workload.group-drain", look)
	}
	look()
	if !r.kernel.RunWhile(deadline, func() bool { return !drain.confirmed }) {
		return &violation{"group-liveness", fmt.Sprintf("the group did not settle and commit every partition's end within %v of the final drain: %s", groupLivenessMax, drain.problem)}
	}
	r.note("group drained")
	return nil
}

// lookAtGroup moves the group drain on: once the group has settled with
// every owner's commits at the targets, it reads the committed offsets
// back from the coordinator; once every read agrees, the drain is done.
func (r *run) lookAtGroup(drain *groupDrain) {
	generation, owners, problem := r.groupSettled()
	if drain.reading > 0 {
		if problem == "" && generation == drain.readGeneration {
			return // the reads are on their way
		}
		// The group moved while reading: those reads are forgotten by
		// their consumers, and no longer count.
		drain.round++
		drain.reading = 0
	}
	if problem != "" {
		drain.problem = problem
		return
	}
	for _, tp := range sortedTargets(drain.targets) {
		if committed, target := owners[tp].consumer.Committed(tp), drain.targets[tp]; committed != target {
			drain.problem = fmt.Sprintf("%s committed at %d by c%d, its end is %d", tp, committed, owners[tp].index, target)
			return
		}
	}
	drain.round++
	round := drain.round
	drain.readGeneration, drain.readMismatch = generation, false
	for _, d := range r.consumers {
		if len(d.consumer.Membership().Assigned) == 0 {
			continue
		}
		drain.reading++
		d.consumer.ReadCommitted(func(read []history.Commit) {
			if round != drain.round {
				return
			}
			drain.reading--
			for _, commit := range read {
				if target := drain.targets[commit.Partition]; commit.Offset != target {
					drain.readMismatch = true
					drain.problem = fmt.Sprintf("the coordinator has %s committed at %d, its end is %d", commit.Partition, commit.Offset, target)
				}
			}
			if drain.reading == 0 && !drain.readMismatch {
				drain.confirmed = true
			}
		})
	}
}

// sortedTargets lists the drain's partitions in order.
func sortedTargets(targets map[history.TopicPartition]int64) []history.TopicPartition {
	tps := make([]history.TopicPartition, 0, len(targets))
	for tp := range targets {
		tps = append(tps, tp)
	}
	slices.SortFunc(tps, history.TopicPartition.Compare)
	return tps
}
