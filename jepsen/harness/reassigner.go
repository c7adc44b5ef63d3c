package harness

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

// reassigner is an operator moving the workload topic's partitions
// (kafka-reassign-partitions.sh --execute, --cancel; KIP-455) every
// Workload.ReassignEvery while the nemesis works: each round picks a
// partition and either (reassignCancelShare of the rounds aside) a random
// target of ReplicationFactor distinct nodes in a random order, or a
// cancellation of the partition's reassignment in progress. A
// reassignment moves data without losing any, so the checkers hold the
// history to every promise as before.
//
// An answer Kafka's controller never gives here is a problem of the run:
// only success, a retriable error (but UNKNOWN_TOPIC_OR_PARTITION: the
// topic exists throughout), NO_REASSIGNMENT_IN_PROGRESS to a
// cancellation, and ELIGIBLE_LEADERS_NOT_AVAILABLE (only the new members
// are in sync) to a cancellation or to a target that may replace a
// reassignment in progress are. After the run (check) no reassignment may be
// left in progress, every partition must have exactly ReplicationFactor
// replicas and a leader among them, as every node describes it, and no
// node outside a partition's replicas may keep its directory.
type reassigner struct {
	client     *kgo.Client
	cluster    *Cluster
	topic      string
	partitions int32
	rf         int16
	nodes      []int32
	every      time.Duration
	// random draws the rounds; only run uses it.
	random *rand.Rand
	// settleTimeout and strayTimeout bound check's waits
	// (reassignSettleTimeout, reassignStrayTimeout).
	settleTimeout, strayTimeout time.Duration
	background

	// targeted holds the partitions a target was sent for, answered or
	// not: a later request for them may meet a reassignment in
	// progress. Only run uses it.
	targeted map[int32]bool

	sent, confirmed, cancelled, refused atomic.Int64
	mutex                               sync.Mutex
	unexpected                          []string
}

func newReassigner(cluster *Cluster, w Workload, seed uint64) (*reassigner, error) {
	client, err := kgo.NewClient(cluster.ClientOptions()...)
	if err != nil {
		return nil, fmt.Errorf("harness: reassigner: %w", err)
	}
	var nodes []int32
	for _, n := range cluster.Nodes() {
		nodes = append(nodes, int32(n.ID))
	}
	return &reassigner{
		client: client, cluster: cluster, topic: w.Topic, partitions: w.Partitions, rf: w.ReplicationFactor, nodes: nodes,
		every: w.ReassignEvery, random: rand.New(rand.NewPCG(seed, reassignStream)), targeted: map[int32]bool{},
		settleTimeout: reassignSettleTimeout, strayTimeout: reassignStrayTimeout,
	}, nil
}

func (r *reassigner) start(ctx context.Context) { r.background.start(ctx, r.run) }

// drawReassignment picks one round's partition and target: rf distinct
// nodes in a random order, or nil (a cancellation) in reassignCancelShare
// of the rounds.
func drawReassignment(random *rand.Rand, partitions int32, nodes []int32, rf int16) (int32, []int32) {
	partition := random.Int32N(partitions)
	if random.Float64() < reassignCancelShare {
		return partition, nil
	}
	shuffled := slices.Clone(nodes)
	random.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
	return partition, shuffled[:rf]
}

// run reassigns until ctx ends. A failed request (no controller, a
// timeout) is the faults at work: the next round draws again.
func (r *reassigner) run(ctx context.Context) {
	admin := kadm.NewClient(r.client)
	ticker := time.NewTicker(r.every)
	defer ticker.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-ticker.C:
		}
		partition, target := drawReassignment(r.random, r.partitions, r.nodes, r.rf)
		req := kadm.AlterPartitionAssignmentsReq{}
		if target == nil {
			req.CancelAssign(r.topic, partition)
		} else {
			req.Assign(r.topic, partition, target)
		}
		replacing := r.targeted[partition]
		if target != nil {
			r.targeted[partition] = true
		}
		requestContext, cancel := context.WithTimeout(ctx, adminRequestTimeout)
		r.sent.Add(1)
		results, err := admin.AlterPartitionAssignments(requestContext, req)
		cancel()
		what := fmt.Sprintf("reassigning %s-%d to %v", r.topic, partition, target)
		if target == nil {
			what = fmt.Sprintf("cancelling the reassignment of %s-%d", r.topic, partition)
		}
		if err != nil {
			// A whole refusal a controller never gives; the rest
			// (no answer, a retriable code) is the faults.
			if code, refused := errors.AsType[*kerr.Error](err); refused && !code.Retriable {
				r.problem("AlterPartitionReassignments %s was refused as a whole: %v", what, err)
			}
			continue
		}
		answer, found := results[r.topic][partition]
		if !found {
			r.problem("AlterPartitionReassignments %s: the answer does not name the partition: %v", what, results)
			continue
		}
		switch judgeReassignment(target != nil, replacing, answer.Err) {
		case reassignConfirmed:
			if target == nil {
				r.cancelled.Add(1)
			} else {
				r.confirmed.Add(1)
			}
		case reassignRefused:
			r.refused.Add(1)
		case reassignRetry:
		case reassignUnexpected:
			r.problem("AlterPartitionReassignments %s answered %v %s", what, answer.Err, answer.ErrMessage)
		}
	}
}

// reassignOutcome is what one answer for one partition means.
type reassignOutcome int

const (
	// reassignConfirmed: a controller started (or cancelled) it.
	reassignConfirmed reassignOutcome = iota
	// reassignRefused: refused as Kafka's controller refuses it, the
	// partition as it was.
	reassignRefused
	// reassignRetry: the faults at work (no controller, a timeout).
	reassignRetry
	// reassignUnexpected: an answer Kafka's controller never gives here.
	reassignUnexpected
)

// judgeReassignment judges a partition's answer: to a target (else a
// cancellation), which may replace a reassignment in progress when
// replacing (a target was sent for the partition before).
func judgeReassignment(target, replacing bool, err error) reassignOutcome {
	switch {
	case err == nil:
		return reassignConfirmed
	case !target && errors.Is(err, kerr.NoReassignmentInProgress):
		return reassignRefused
	case errors.Is(err, kerr.EligibleLeadersNotAvailable):
		// Retriable for clients, but refused so only while a
		// reassignment is in progress.
		if !target || replacing {
			return reassignRefused
		}
		return reassignUnexpected
	case errors.Is(err, kerr.UnknownTopicOrPartition):
		// Retriable for clients, but the topic exists all along and
		// only an active controller, caught up, plans an answer.
		return reassignUnexpected
	case kerr.IsRetriable(err):
		return reassignRetry
	}
	return reassignUnexpected
}

func (r *reassigner) problem(format string, args ...any) {
	r.mutex.Lock()
	defer r.mutex.Unlock()
	r.unexpected = append(r.unexpected, fmt.Sprintf(format, args...))
}

// stop ends the operator; its client stays for check.
func (r *reassigner) stop() { r.wait() }

// problems are the answers Kafka's controller never gives.
func (r *reassigner) problems() []string {
	r.mutex.Lock()
	defer r.mutex.Unlock()
	return slices.Clone(r.unexpected)
}

// check runs once the operator has stopped and the cluster has healed:
// within settleTimeout no reassignment of the topic may be in
// progress and every node must describe each partition with exactly
// ReplicationFactor replicas and a leader among them; then, within
// strayTimeout, no node outside a partition's replicas may keep
// its directory (a removed replica deletes its copy once the completion
// reaches it, a node that was down or fenced once it is unfenced), nor
// any replica lack one. It returns the problems found.
func (r *reassigner) check(ctx context.Context) []string {
	admin := kadm.NewClient(r.client)
	var replicas map[int32][]int32
	err := r.cluster.waitFor(ctx, r.settleTimeout, "the reassignments to end", func() error {
		var err error
		replicas, err = r.settled(ctx, admin)
		return err
	})
	if err != nil {
		return []string{fmt.Sprintf("reassignments stuck: %v", err)}
	}
	var strays []string
	err = r.cluster.waitFor(ctx, r.strayTimeout, "the removed replicas' directories to go", func() error {
		strays = r.strayDirectories(replicas)
		if len(strays) > 0 {
			return errors.New(strays[0])
		}
		return nil
	})
	var problems []string
	if err != nil && len(strays) == 0 {
		problems = append(problems, fmt.Sprintf("reassignment leftovers: %v", err))
	}
	if err != nil {
		for _, stray := range strays {
			problems = append(problems, fmt.Sprintf("reassignment leftovers %v after the reassignments ended: %s", r.strayTimeout, stray))
		}
	}
	return problems
}

// settled returns each partition's replicas once no reassignment of the
// topic is in progress and every node describes every partition alike,
// with ReplicationFactor distinct replicas and a leader among them;
// otherwise what stands in the way.
func (r *reassigner) settled(ctx context.Context, admin *kadm.Client) (map[int32][]int32, error) {
	requestContext, cancel := context.WithTimeout(ctx, adminRequestTimeout)
	defer cancel()
	all := kadm.TopicsSet{}
	for p := range r.partitions {
		all.Add(r.topic, p)
	}
	listed, err := admin.ListPartitionReassignments(requestContext, all)
	if err != nil {
		return nil, fmt.Errorf("listing the reassignments: %w", err)
	}
	var inProgress []string
	for _, p := range listed.Sorted() {
		if p.Topic == r.topic {
			inProgress = append(inProgress, fmt.Sprintf("%s-%d replicas %v adding %v removing %v", p.Topic, p.Partition, p.Replicas, p.AddingReplicas, p.RemovingReplicas))
		}
	}
	if len(inProgress) > 0 {
		return nil, fmt.Errorf("in progress: %s", strings.Join(inProgress, "; "))
	}
	metadata, err := admin.Metadata(requestContext, r.topic)
	if err != nil {
		return nil, fmt.Errorf("metadata: %w", err)
	}
	topic, found := metadata.Topics[r.topic]
	if !found || topic.Err != nil {
		return nil, fmt.Errorf("metadata of %s: found %t, error %v", r.topic, found, topic.Err)
	}
	replicas := map[int32][]int32{}
	for p := range r.partitions {
		d, found := topic.Partitions[p]
		switch {
		case !found:
			return nil, fmt.Errorf("metadata lacks %s-%d", r.topic, p)
		case d.Err != nil:
			return nil, fmt.Errorf("metadata of %s-%d: %v", r.topic, p, d.Err)
		case len(d.Replicas) != int(r.rf) || len(distinct(d.Replicas)) != len(d.Replicas):
			return nil, fmt.Errorf("%s-%d has replicas %v, not %d distinct ones", r.topic, p, d.Replicas, r.rf)
		case !slices.Contains(d.Replicas, d.Leader):
			return nil, fmt.Errorf("%s-%d has leader %d, not one of its replicas %v", r.topic, p, d.Leader, d.Replicas)
		}
		replicas[p] = slices.Clone(d.Replicas)
	}
	// Every node must describe them so too: a node deletes a removed
	// replica's copy once its own metadata has the completion.
	for _, n := range r.cluster.Nodes() {
		view, err := r.cluster.View(n.ID)
		if err != nil {
			return nil, fmt.Errorf("node %d: %w", n.ID, err)
		}
		for _, p := range view.Partitions {
			if p.Topic == r.topic && !slices.Equal(p.Replicas, replicas[p.Partition]) {
				return nil, fmt.Errorf("node %d sees %s; the metadata said replicas %v", n.ID, p, replicas[p.Partition])
			}
		}
	}
	return replicas, nil
}

// strayDirectories describes, read on the nodes' disks, each directory
// of a partition on a node outside its replicas (the partition's
// directory, or one renamed aside for deletion), and each replica
// without the partition's directory. Every node must be running and
// unpaused: a node deletes strays only while it runs.
func (r *reassigner) strayDirectories(replicas map[int32][]int32) []string {
	var found []string
	for _, n := range r.cluster.Nodes() {
		if !n.Alive() || n.Paused() {
			found = append(found, fmt.Sprintf("node %d is not running", n.ID))
			continue
		}
		entries, err := os.ReadDir(n.dataDir)
		if err != nil {
			found = append(found, fmt.Sprintf("node %d: %v", n.ID, err))
			continue
		}
		for p := range r.partitions {
			name := fmt.Sprintf("%s-%d", r.topic, p)
			replica := slices.Contains(replicas[p], int32(n.ID))
			has := false
			for _, e := range entries {
				switch {
				case e.Name() == name:
					has = true
					if !replica {
						found = append(found, fmt.Sprintf("node %d keeps %s, whose replicas are %v", n.ID, filepath.Join(n.dataDir, name), replicas[p]))
					}
				case strings.HasPrefix(e.Name(), name+".") && strings.HasSuffix(e.Name(), "-delete"):
					found = append(found, fmt.Sprintf("node %d keeps %s, renamed for deletion", n.ID, filepath.Join(n.dataDir, e.Name())))
				}
			}
			if replica && !has {
				found = append(found, fmt.Sprintf("node %d, a replica of %s (replicas %v), has no directory of it", n.ID, name, replicas[p]))
			}
		}
	}
	return found
}

// distinct returns ids without repeats, in order.
func distinct(ids []int32) []int32 {
	var kept []int32
	for _, id := range ids {
		if !slices.Contains(kept, id) {
			kept = append(kept, id)
		}
	}
	return kept
}
