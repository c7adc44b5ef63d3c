package replica

import (
	"fmt"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"sluice/core"
	"sluice/core/batch"
	"sluice/core/metadata"
	"sluice/sim"
	"sluice/sim/kernel"
	"sluice/sim/simdisk"
)

// This file is a harness for replication tests: three (or more) replicas of
// one partition, each a Partition on its own simulated machine (its own
// disk, crashable), all on one simulation kernel. The harness plays the
// broker and the controller:
//
//   - setLeader applies a metadata change to every live replica, as the
//     broker applies the metadata log (BecomeLeader / BecomeFollower);
//   - pump delivers one fetch from every follower that is ready to its
//     leader and the answer back, in process (no network), for followers
//     not cut off;
//   - every ISR proposal a leader makes is captured, and committed at once
//     (a new partition epoch, applied to every replica) unless the test
//     says otherwise.
//
//	h := newHarness(t, 3, nil)
//	h.setLeader(1, []int32{1, 2, 3})
//	offset, ack := h.produce("a", "b")
//	h.runUntil("acknowledged", func() bool { return ack.answered })

const (
	harnessPartition = "orders"
	// harnessStep is how far virtual time moves between pumps: longer
	// than no sync, shorter than most.
	harnessStep = 500 * time.Microsecond
	// harnessWaitMax bounds runUntil, in virtual time.
	harnessWaitMax = 30 * time.Second
	// harnessFetchBytes is what one fetch may read.
	harnessFetchBytes = 1 << 20
	// harnessLagTime is every replica's replica.lag.time.max.ms.
	harnessLagTime = 10 * time.Second
)

type harness struct {
	t      *testing.T
	kernel *kernel.Kernel
	ids    []int32
	nodes  map[int32]*harnessNode
	topic  metadata.TopicID

	// The metadata, as the harness's controller keeps it.
	leader         int32
	leaderEpoch    int32
	partitionEpoch int32
	replicas       []int32
	isr            []int32

	// proposals are the ISR proposals leaders made, in order; manualISR
	// leaves them uncommitted for the test to decide.
	proposals []ISRProposal
	manualISR bool
	// nextShrinkCheck is when pump next runs the leaders' ISR shrink
	// check, as the broker does every half lag time.
	nextShrinkCheck int64
	// formers are the former leaders the next new leadership waits for
	// (takeover.go), as the broker would name them.
	formers []FormerLeader
}

type harnessNode struct {
	id          int32
	machine     *sim.Machine
	partition   *Partition
	config      map[string]string
	brokerEpoch int64
	fenced      bool
	// cut stops the node's fetches from reaching its leader.
	cut    bool
	halted error
}

// newHarness starts n replicas (node ids 1..n) with the given topic
// configs, none of them leading yet.
func newHarness(t *testing.T, n int, configs map[string]string, canaries ...string) *harness {
	t.Helper()
	k := kernel.NewKernel(1, nil)
	h := &harness{t: t, kernel: k, nodes: map[int32]*harnessNode{}, topic: metadata.TopicID{1, 2, 3}}
	for id := int32(1); id <= int32(n); id++ {
		node := &harnessNode{id: id, config: configs, brokerEpoch: 100 + int64(id)}
		node.machine = sim.NewMachine(k, nil, fmt.Sprintf("n%d", id), sim.MachineOptions{
			Disk:     simdisk.Faults{SyncLatencyMin: time.Millisecond, SyncLatencyMax: 3 * time.Millisecond},
			Canaries: core.NewCanaries(canaries...),
			OnHalt:   func(_ *sim.Machine, reason error) { node.halted = reason },
		})
		h.ids = append(h.ids, id)
		h.nodes[id] = node
		h.open(id)
	}
	h.run(10 * time.Millisecond) // the first syncs
	return h
}

// open opens a node's replica on its machine's current process.
func (h *harness) open(id int32) {
	h.t.Helper()
	node := h.nodes[id]
	config, err := ConfigFrom(node.config, nil)
	if err != nil {
		h.t.Fatal(err)
	}
	config.ReplicaLagTimeMax = harnessLagTime
	p, err := Open(node.machine.World(), harnessPartition+"-0", Identity{Topic: harnessPartition, TopicID: h.topic, NodeID: id}, config)
	if err != nil {
		h.t.Fatalf("opening node %d: %v", id, err)
	}
	p.SetReplication(harnessReplication{h: h, node: id})
	node.partition = p
}

// harnessReplication is a node's view of the harness's controller.
type harnessReplication struct {
	h    *harness
	node int32
}

func (r harnessReplication) ProposeISR(p *Partition, proposal ISRProposal) {
	h := r.h
	h.proposals = append(h.proposals, proposal)
	if h.manualISR {
		return
	}
	// Commit on a later turn, as a controller answers.
	h.kernel.Schedule(0, nil, "commit isr", func() { h.commitProposal(r.node, proposal) })
}

func (r harnessReplication) Broker(id int32) (int64, bool) {
	node, ok := r.h.nodes[id]
	if !ok {
		return -1, false
	}
	return node.brokerEpoch, !node.fenced
}

// commitProposal applies a proposal, as the controller would after its
// checks, and answers the proposer.
func (h *harness) commitProposal(from int32, proposal ISRProposal) {
	if proposal.LeaderEpoch != h.leaderEpoch || proposal.PartitionEpoch != h.partitionEpoch || from != h.leader {
		h.answer(from, proposal, -1, errStaleProposal)
		return
	}
	for _, m := range proposal.ISR {
		if m.BrokerEpoch >= 0 && m.BrokerEpoch != h.nodes[m.BrokerID].brokerEpoch {
			h.answer(from, proposal, -1, errIneligible)
			return
		}
	}
	h.isr = proposal.Members()
	h.partitionEpoch++
	h.apply()
	h.answer(from, proposal, h.partitionEpoch, nil)
}

func (h *harness) answer(to int32, proposal ISRProposal, partitionEpoch int32, err error) {
	if node := h.nodes[to]; node.partition != nil {
		node.partition.ISRProposalAnswered(proposal, partitionEpoch, err)
	}
}

// setLeader moves the leadership (a new leader epoch) and sets the ISR.
func (h *harness) setLeader(leader int32, isr []int32) {
	h.leader = leader
	h.leaderEpoch++
	h.partitionEpoch++
	h.replicas = slices.Clone(h.ids)
	h.isr = slices.Clone(isr)
	h.apply()
}

// setISR changes the ISR without changing the leader, as the controller
// does when it fences a broker.
func (h *harness) setISR(isr []int32) {
	h.isr = slices.Clone(isr)
	h.partitionEpoch++
	h.apply()
}

// apply gives every live replica the metadata's current state.
func (h *harness) apply() {
	for _, id := range h.ids {
		h.applyTo(id)
	}
}

func (h *harness) applyTo(id int32) {
	node := h.nodes[id]
	if node.partition == nil {
		return
	}
	if id == h.leader {
		node.partition.BecomeLeader(h.leaderEpoch, h.partitionEpoch, h.replicas, h.isr, h.formers)
		return
	}
	node.partition.BecomeFollower(h.leader, h.leaderEpoch, h.partitionEpoch, h.replicas, h.isr)
}

// pump delivers one fetch from every ready follower to its leader, and
// the answer back, and runs the ISR shrink check when it is due.
func (h *harness) pump() {
	if now := h.kernel.Now(); now >= h.nextShrinkCheck {
		h.nextShrinkCheck = now + int64(harnessLagTime/2)
		for _, id := range h.ids {
			if p := h.partition(id); p != nil {
				p.MaybeShrinkISR()
			}
		}
	}
	for _, id := range h.ids {
		node := h.nodes[id]
		if node.partition == nil || node.cut || !node.partition.IsFollower() {
			continue
		}
		leader := h.nodes[node.partition.Leader()]
		if leader.partition == nil || leader.cut {
			continue
		}
		position, ready := node.partition.FetchPosition()
		if !ready {
			continue
		}
		result, err := leader.partition.ServeFollowerFetch(FollowerFetch{
			ReplicaID: id, BrokerEpoch: node.brokerEpoch, CurrentLeaderEpoch: position.CurrentLeaderEpoch,
			FetchOffset: position.FetchOffset, LastFetchedEpoch: position.LastFetchedEpoch,
			LogStartOffset: position.LogStartOffset, MaxBytes: harnessFetchBytes, AtLeastOne: true,
		})
		node.partition.HandleFetchAnswer(position, FetchAnswer{
			Error: err, Records: result.Records, HighWatermark: result.HighWatermark, LogStartOffset: result.LogStartOffset,
			DivergingEpoch: result.DivergingEpoch, DivergingEndOffset: result.DivergingEndOffset,
		})
	}
}

// run pumps and advances virtual time by d.
func (h *harness) run(d time.Duration) {
	h.t.Helper()
	end := h.kernel.Now() + int64(d)
	for h.kernel.Now() < end {
		h.pump()
		h.kernel.RunUntil(min(end, h.kernel.Now()+int64(harnessStep)))
	}
	h.checkAlive()
}

// runUntil pumps until cond holds, failing the test after harnessWaitMax.
func (h *harness) runUntil(what string, cond func() bool) {
	h.t.Helper()
	limit := h.kernel.Now() + int64(harnessWaitMax)
	for !cond() {
		if h.kernel.Now() >= limit {
			h.t.Fatalf("%s: not within %v", what, harnessWaitMax)
		}
		h.pump()
		h.kernel.RunUntil(h.kernel.Now() + int64(harnessStep))
		h.checkAlive()
	}
}

func (h *harness) checkAlive() {
	h.t.Helper()
	for _, id := range h.ids {
		if err := h.nodes[id].halted; err != nil {
			h.t.Fatalf("node %d halted: %v", id, err)
		}
	}
}

// crash kills a node's process; its disk keeps what was synced.
func (h *harness) crash(id int32) {
	node := h.nodes[id]
	node.machine.Crash()
	node.partition = nil
}

// restart starts a crashed node again with a new broker epoch (a new
// registration) and applies the metadata to it.
func (h *harness) restart(id int32) {
	h.t.Helper()
	node := h.nodes[id]
	node.machine.Restart()
	node.brokerEpoch += 1000
	h.open(id)
	h.applyTo(id)
}

// partition is a node's replica.
func (h *harness) partition(id int32) *Partition { return h.nodes[id].partition }

// end is a node's log end offset.
func (h *harness) end(id int32) int64 { return h.partition(id).LogEndOffset() }

// produce appends values as one batch to the leader, with acks=all, and
// returns its base offset and the waiter's outcome, set once answered.
func (h *harness) produce(values ...string) (int64, *ackOutcome) {
	h.t.Helper()
	return h.produceBatch(batch.NoProducerID, 0, 0, values...)
}

// ackOutcome is an acks=all produce's answer, once it has one.
type ackOutcome struct {
	answered bool
	err      error
	// syncedAtAnswer is every replica's synced offset when it was
	// answered.
	syncedAtAnswer map[int32]int64
}

// produceBatch appends one batch, idempotent when producerID is not
// NoProducerID.
func (h *harness) produceBatch(producerID int64, producerEpoch int16, sequence int32, values ...string) (int64, *ackOutcome) {
	h.t.Helper()
	result, err := h.partition(h.leader).AppendAsLeader(h.batch(producerID, producerEpoch, sequence, values...), true)
	if err != nil {
		h.t.Fatalf("appending %v: %v", values, err)
	}
	outcome := &ackOutcome{}
	h.partition(h.leader).WaitForAcks(result.LastOffset, func(err error) {
		outcome.answered, outcome.err = true, err
		outcome.syncedAtAnswer = map[int32]int64{}
		for _, id := range h.ids {
			if p := h.partition(id); p != nil {
				outcome.syncedAtAnswer[id] = p.SyncedOffset()
			}
		}
	})
	return result.BaseOffset, outcome
}

func (h *harness) batch(producerID int64, producerEpoch int16, sequence int32, values ...string) []byte {
	spec := batch.Spec{
		BaseTimestamp: h.nodes[h.ids[0]].machine.Clock.Now().UnixMilli(),
		ProducerID:    producerID, ProducerEpoch: producerEpoch, BaseSequence: sequence,
	}
	for _, v := range values {
		spec.Records = append(spec.Records, batch.Record{Value: []byte(v)})
	}
	return batch.Build(spec)
}

// values reads a node's whole log, committed or not, as record values
// with their offsets and the epochs of their batches ("offset:value@epoch").
func (h *harness) values(id int32) []string {
	h.t.Helper()
	p := h.partition(id)
	var out []string
	offset := p.LogStartOffset()
	for offset < p.LogEndOffset() {
		chunk, err := p.log.Read(offset, p.LogEndOffset(), 1<<20, true)
		if err != nil {
			h.t.Fatalf("reading node %d at %d: %v", id, offset, err)
		}
		s := batch.Scanner{Buf: chunk}
		for s.Next() {
			hd := s.Header()
			records, err := batch.Records(s.Batch())
			if err != nil {
				h.t.Fatal(err)
			}
			for _, r := range records {
				at := hd.BaseOffset + int64(r.OffsetDelta)
				if at >= p.LogStartOffset() {
					out = append(out, strconv.FormatInt(at, 10)+":"+string(r.Value)+"@"+strconv.Itoa(int(hd.LeaderEpoch)))
				}
			}
			offset = hd.NextOffset()
		}
	}
	return out
}

// requireSameLogs fails unless every given node's log holds the same
// records.
func (h *harness) requireSameLogs(ids ...int32) {
	h.t.Helper()
	want := h.values(ids[0])
	for _, id := range ids[1:] {
		if got := h.values(id); !slices.Equal(got, want) {
			h.t.Fatalf("node %d's log %v differs from node %d's %v", id, got, ids[0], want)
		}
	}
}

// errStaleProposal and errIneligible are the harness controller's
// refusals.
var (
	errStaleProposal = kerr.InvalidUpdateVersion
	errIneligible    = kerr.IneligibleReplica
)
