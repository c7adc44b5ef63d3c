package clusterworkload

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"sluice/core/metadata"
	"sluice/jepsen/history"
	"sluice/sim/kernel"
	"sluice/sim/scenario"
)

// Reassigning partitions (scenario.Topic's ReassignEvery): every
// ReassignEvery in the safety phase an operator moves one partition of a
// topic the clients use to a random set of as many nodes, in a random
// order (AlterPartitionReassignments, as kafka-reassign-partitions.sh
// --execute), or, in a fifth of the rounds, cancels the partition's
// reassignment in progress (--cancel). When groups consume, a fifth of the
// rounds move a partition of __consumer_offsets instead, and with it the
// coordination of the groups it holds. The request goes to node after node
// (each forwards it to the active controller) until one answers for the
// partition.
//
// What it promises: a reassignment moves data without losing any, so every
// check holds as before, with each partition's replicas as they end up:
// once the cluster has converged, no reassignment may be left in progress
// (reassignment-stuck), each partition's replicas must be, in order, the
// target of the last request for it, when a controller confirmed it and no
// request for the partition ever went unanswered (reassignment-not-applied), and every final replica must hold the log
// (replicas.go). An answer Kafka's controller never gives here fails
// reassignment-refused.

const (
	alterReassignmentsVersion = 1
	// reassignAttemptsMax bounds the nodes one round asks.
	reassignAttemptsMax = 6
	// reassignCancelChance is the share of rounds that cancel.
	reassignCancelChance = 0.2
	// reassignOffsetsChance is the share of rounds that move a
	// partition of __consumer_offsets, when groups consume.
	reassignOffsetsChance = 0.2
)

// reassignment is one round's request.
type reassignment struct {
	topic     string
	partition int32
	// target is nil for a cancellation.
	target []int32
	// offsets is set for a partition of __consumer_offsets, whose
	// replication factor is what its creation found (up to three
	// replicas, as many brokers as were up): the request allows a change,
	// and nothing is expected of the partition's replicas in the end.
	offsets bool
}

// reassigner is one topic's operator of partition reassignments.
type reassigner struct {
	topic scenario.Topic
	rng   *rand.Rand
	// busy is set while a round is under way; the liveness phase waits
	// for none to be.
	busy bool
	// last holds, by partition, what the last request sent for it
	// should leave: its target once a controller confirmed it, nil when
	// that is unknown (unanswered, or a cancellation).
	last map[int32][]int32
	// uncertain holds the partitions a request went out for that got
	// no answer saying whether it took effect (a timeout, a broken
	// connection, a retriable error): it may still be waiting in a
	// broker's forwarding queue and take effect after a later request
	// did, so what the partition ends as is not known.
	uncertain map[int32]bool
	// rounds counts the rounds begun, confirmed those a controller
	// accepted, requests the requests sent, to spread them over the
	// nodes.
	rounds, confirmed, requests int
}

// startReassignments sets every reassigned topic's operator going.
func (r *run) startReassignments() {
	for _, t := range r.scenario.Topics {
		if t.ReassignEvery == 0 {
			continue
		}
		a := &reassigner{topic: t, rng: kernel.NewRand(r.scenario.Seed, "workload/reassignments/"+t.Name), last: map[int32][]int32{}, uncertain: map[int32]bool{}}
		r.reassigners = append(r.reassigners, a)
		r.kernel.Schedule(int64(t.ReassignEvery), nil, "workload.reassign", func() { r.reassignRound(a) })
	}
}

// reassigning reports whether a round is still under way.
func (r *run) reassigning() bool {
	return slices.ContainsFunc(r.reassigners, func(a *reassigner) bool { return a.busy })
}

// reassignRound begins one round, and schedules the next, until the
// liveness phase.
func (r *run) reassignRound(a *reassigner) {
	if r.stopSending || r.violation != nil {
		return
	}
	r.kernel.Schedule(int64(a.topic.ReassignEvery), nil, "workload.reassign", func() { r.reassignRound(a) })
	if a.busy {
		return
	}
	x := reassignment{topic: a.topic.Name, partition: int32(a.rng.IntN(r.partitionCount(a.topic)))}
	size := a.topic.Replication
	if len(r.scenario.Clients.Groups) > 0 && a.rng.Float64() < reassignOffsetsChance {
		x = reassignment{topic: metadata.ConsumerOffsetsTopic, partition: int32(a.rng.IntN(r.scenario.Cluster.OffsetsPartitions)), offsets: true}
		size = min(3, r.scenario.Cluster.Nodes)
	}
	if a.rng.Float64() >= reassignCancelChance {
		nodes := make([]int32, r.scenario.Cluster.Nodes)
		for i := range nodes {
			nodes[i] = int32(i + 1)
		}
		a.rng.Shuffle(len(nodes), func(i, j int) { nodes[i], nodes[j] = nodes[j], nodes[i] })
		x.target = nodes[:size]
	}
	a.busy = true
	a.rounds++
	if !x.offsets {
		// Until a controller confirms it, the request may or may not
		// take effect: nothing is expected of the partition.
		a.last[x.partition] = nil
	}
	r.reassign(a, x, 0)
}

// reassign sends one round's request to the next node, and again to the
// one after while no controller answered for the partition.
func (r *run) reassign(a *reassigner, x reassignment, attempt int) {
	node := 1 + a.requests%r.scenario.Cluster.Nodes
	a.requests++
	req := kmsg.NewPtrAlterPartitionAssignmentsRequest()
	req.Version = alterReassignmentsVersion
	req.TimeoutMillis = int32(adminTimeout.Milliseconds())
	req.AllowReplicationFactorChange = x.offsets
	rt := kmsg.NewAlterPartitionAssignmentsRequestTopic()
	rt.Topic = x.topic
	rp := kmsg.NewAlterPartitionAssignmentsRequestTopicPartition()
	rp.Partition, rp.Replicas = x.partition, x.target
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	neverReady := r.neverReady(x.target)
	r.admin.request(clientAddress(node), req, func(resp kmsg.Response, err error) {
		answered := false
		if err == nil {
			answered = r.reassignmentAnswer(a, node, x, neverReady, resp.(*kmsg.AlterPartitionAssignmentsResponse))
		}
		if !answered && !x.offsets {
			a.uncertain[x.partition] = true
		}
		if answered || r.violation != nil || attempt+1 >= reassignAttemptsMax {
			a.busy = false
			return
		}
		r.retryAdmin(func() { r.reassign(a, x, attempt+1) })
	})
}

// reassignmentAnswer judges an answer and reports whether a controller
// gave it (rather than refusing it as a whole or for want of one).
// neverReady are the target's brokers that had never been ready when the
// request went out: their registration may not be committed, and Kafka
// refuses a target naming an unregistered broker.
func (r *run) reassignmentAnswer(a *reassigner, node int, x reassignment, neverReady []int32, resp *kmsg.AlterPartitionAssignmentsResponse) bool {
	if resp.ErrorCode != 0 || len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 {
		return false
	}
	code := resp.Topics[0].Partitions[0].ErrorCode
	switch {
	case code == 0:
		a.confirmed++
		if x.target != nil && !x.offsets {
			a.last[x.partition] = slices.Clone(x.target)
		}
		r.note(fmt.Sprintf("n%d confirmed reassigning %s-%d to %v", node, x.topic, x.partition, x.target))
		return true
	case code == kerr.NoReassignmentInProgress.Code && x.target == nil, code == kerr.EligibleLeadersNotAvailable.Code:
		// Nothing to cancel, or a cancellation or a new target that
		// would drop every in-sync replica: the partition stays as it
		// was, and its last target, if confirmed, is known no more
		// (this round reset it).
		return true
	case code == kerr.InvalidReplicaAssignment.Code && len(neverReady) > 0:
		// The operator picked a broker that has not registered yet (it
		// halted before its registration was committed, say): the
		// partition stays as it was.
		r.note(fmt.Sprintf("n%d refused reassigning %s-%d to %v, naming brokers never ready %v", node, x.topic, x.partition, x.target, neverReady))
		return true
	case kerr.IsRetriable(kerr.ErrorForCode(code)):
		return false
	default:
		message := ""
		if m := resp.Topics[0].Partitions[0].ErrorMessage; m != nil {
			message = ": " + *m
		}
		r.fail("reassignment-refused", fmt.Sprintf("n%d answered reassigning %s-%d to %v: %v%s",
			node, x.topic, x.partition, x.target, kerr.ErrorForCode(code), message))
		return true
	}
}

// neverReady lists the brokers among target that have never been ready.
// A broker is ready only once the controller has committed its
// registration, which it never forgets, so every other broker is
// registered. (One that registered but never became ready is listed too:
// the workload cannot tell it from one whose registration was never
// committed.)
func (r *run) neverReady(target []int32) []int32 {
	var never []int32
	for _, id := range target {
		if !r.nodes[id-1].everReady {
			never = append(never, id)
		}
	}
	return never
}

// awaitReassignments waits, until deadline, for a controller to list no
// reassignment in progress, then learns every reassigned topic's replicas
// from the metadata and holds them to the last confirmed targets.
func (r *run) awaitReassignments(deadline int64) bool {
	if len(r.reassigners) == 0 {
		return true
	}
	problem := "not asked yet"
	for attempt := 0; r.violation == nil; attempt++ {
		done, asked := false, false
		req := kmsg.NewPtrListPartitionReassignmentsRequest()
		req.TimeoutMillis = int32(adminTimeout.Milliseconds())
		r.admin.request(clientAddress(1+attempt%len(r.nodes)), req, func(resp kmsg.Response, err error) {
			done = true
			switch {
			case err != nil:
				problem = err.Error()
			case resp.(*kmsg.ListPartitionReassignmentsResponse).ErrorCode != 0:
				problem = kerr.ErrorForCode(resp.(*kmsg.ListPartitionReassignmentsResponse).ErrorCode).Error()
			default:
				asked = true
				problem = describeReassignments(resp.(*kmsg.ListPartitionReassignmentsResponse))
			}
		})
		if !r.runWhile(deadline, func() bool { return !done }) {
			break
		}
		if asked && problem == "" {
			return r.learnReassignedReplicas(deadline)
		}
		next := r.kernel.Now() + int64(replicaCheckInterval)
		if next > deadline {
			break
		}
		r.runWhile(next, func() bool { return true })
	}
	if r.violation == nil {
		r.fail("reassignment-stuck", fmt.Sprintf("%v after the heal: %s", r.scenario.Liveness, problem))
	}
	return false
}

// describeReassignments names the reassignments a list shows in progress,
// "" for none.
func describeReassignments(resp *kmsg.ListPartitionReassignmentsResponse) string {
	text := ""
	for _, t := range resp.Topics {
		for _, p := range t.Partitions {
			text += fmt.Sprintf(" %s-%d replicas %v adding %v removing %v", t.Topic, p.Partition, p.Replicas, p.AddingReplicas, p.RemovingReplicas)
		}
	}
	return text
}

// learnReassignedReplicas waits, until deadline, for every node to
// describe the reassigned topics alike and without a reassignment's
// leftovers (each node's image follows the metadata log at its own pace),
// takes up their replica sets from that, and checks each against its last
// confirmed target.
func (r *run) learnReassignedReplicas(deadline int64) bool {
	problem := "not asked yet"
	for r.violation == nil {
		var learned map[history.TopicPartition][]int32
		learned, problem = r.describeReassignedReplicas(deadline)
		if learned != nil {
			return r.checkReassignedReplicas(learned)
		}
		next := r.kernel.Now() + int64(replicaCheckInterval)
		if next > deadline {
			r.fail("reassignment-stuck", fmt.Sprintf("the nodes do not describe the reassigned topics alike %v after the heal: %s", r.scenario.Liveness, problem))
			return false
		}
		r.runWhile(next, func() bool { return true })
	}
	return false
}

// describeReassignedReplicas asks every live node for the metadata and
// returns the reassigned topics' replica sets if all answered alike, or
// what stands in the way.
func (r *run) describeReassignedReplicas(deadline int64) (map[history.TopicPartition][]int32, string) {
	answers := make([]map[history.TopicPartition][]int32, len(r.nodes))
	problems := make([]string, len(r.nodes))
	for i, n := range r.nodes {
		if !n.up {
			problems[i] = n.name + " is down"
		}
	}
	r.askEveryLiveNode(deadline, func() kmsg.Request { return r.metadataRequest() }, func(n *node, resp kmsg.Response, err error) {
		i := slices.Index(r.nodes, n)
		if err != nil {
			problems[i] = fmt.Sprintf("%s: %v", n.name, err)
			return
		}
		answers[i], problems[i] = r.reassignedReplicas(resp.(*kmsg.MetadataResponse))
		if problems[i] != "" {
			problems[i] = n.name + " " + problems[i]
		}
	})
	for i := range r.nodes {
		switch {
		case problems[i] != "":
			return nil, problems[i]
		case answers[i] == nil:
			return nil, r.nodes[i].name + " did not answer"
		case i > 0 && !maps.EqualFunc(answers[i], answers[0], slices.Equal[[]int32]):
			return nil, fmt.Sprintf("%s and %s describe the replicas apart", r.nodes[0].name, r.nodes[i].name)
		}
	}
	return answers[0], ""
}

// reassignedReplicas reads the reassigned topics' replica sets from a
// Metadata answer, or says why it cannot: a partition missing, or with
// more replicas than the topic's replication (a reassignment's extra
// ones, in an image not yet past its completion).
func (r *run) reassignedReplicas(resp *kmsg.MetadataResponse) (map[history.TopicPartition][]int32, string) {
	learned := map[history.TopicPartition][]int32{}
	for _, a := range r.reassigners {
		found := 0
		for _, t := range resp.Topics {
			if t.Topic == nil || *t.Topic != a.topic.Name || t.ErrorCode != 0 {
				continue
			}
			for _, p := range t.Partitions {
				if p.ErrorCode != 0 || len(p.Replicas) != a.topic.Replication {
					return nil, fmt.Sprintf("describes %s-%d with replicas %v (error %d)", a.topic.Name, p.Partition, p.Replicas, p.ErrorCode)
				}
				learned[history.TopicPartition{Topic: a.topic.Name, Partition: p.Partition}] = slices.Clone(p.Replicas)
				found++
			}
		}
		if found != r.partitionCount(a.topic) {
			return nil, fmt.Sprintf("describes %d partitions of %s", found, a.topic.Name)
		}
	}
	return learned, ""
}

// checkReassignedReplicas holds the learned replica sets to the last
// confirmed targets, and takes them up as the partitions' replicas.
func (r *run) checkReassignedReplicas(learned map[history.TopicPartition][]int32) bool {
	for _, a := range r.reassigners {
		for _, partition := range slices.Sorted(maps.Keys(a.last)) {
			tp := history.TopicPartition{Topic: a.topic.Name, Partition: partition}
			if want := a.last[partition]; want != nil && !a.uncertain[partition] && !slices.Equal(learned[tp], want) {
				r.fail("reassignment-not-applied", fmt.Sprintf("%s has replicas %v once converged; the last reassignment a controller confirmed was to %v", tp, learned[tp], want))
				return false
			}
		}
	}
	for tp, replicas := range learned {
		r.replicas[tp] = replicas
	}
	return true
}

// reassignmentCounts sums the operators' rounds and confirmed requests.
func (r *run) reassignmentCounts() (rounds, confirmed int) {
	for _, a := range r.reassigners {
		rounds += a.rounds
		confirmed += a.confirmed
	}
	return rounds, confirmed
}
