package clusterworkload

import (
	"fmt"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"sluice/jepsen/history"
	"sluice/sim/scenario"
)

// Growing a topic (scenario.Topic's GrowTo and GrowAt): at GrowAt into the
// safety phase the admin client asks for the new partition count with
// CreatePartitions, as an operator would, while the clients and the faults
// go on. It asks a node after another until one answers that the topic has
// the count: success, or INVALID_PARTITIONS once an earlier attempt whose
// answer was lost has done it, which a Metadata request then confirms.
// Then it learns the new partitions' replicas (as setup does for the
// first), and the producers that write every partition of the topic start
// on them, as a producer does once its metadata shows them. A group's
// leader notices on its own (simclient's partition watch). Readers keep
// their assignment: a consumer by assignment reads what it was given.
//
// The liveness phase waits for the growth to be confirmed and its
// partitions learned; from then on every check covers the new partitions
// too (allPartitions).

// createPartitionsVersion is the newest CreatePartitions Sluice serves.
const createPartitionsVersion = 3

// growth is one topic's growth in progress.
type growth struct {
	topic scenario.Topic
	// grown is set once the controller has the new count; learned once
	// every new partition's replicas are known.
	grown, learned bool
	attempts       int
}

// startGrowth schedules each growing topic's growth, at its time after
// safetyStart.
func (r *run) startGrowth(safetyStart int64) {
	for _, t := range r.scenario.Topics {
		if t.GrowTo == 0 {
			continue
		}
		g := &growth{topic: t}
		r.growths = append(r.growths, g)
		r.kernel.Schedule(safetyStart+int64(t.GrowAt)-r.kernel.Now(), nil, "workload.grow", func() { r.grow(g) })
	}
}

// growing reports whether a growth is still under way: liveness waits for
// none to be.
func (r *run) growing() bool {
	for _, g := range r.growths {
		if !g.learned {
			return true
		}
	}
	return false
}

// partitionCount is how many partitions the workload knows a topic has:
// its first count until a growth is confirmed and learned.
func (r *run) partitionCount(t scenario.Topic) int {
	for _, g := range r.growths {
		if g.topic.Name == t.Name && g.learned {
			return g.topic.GrowTo
		}
	}
	return t.Partitions
}

// grow asks a node for the new count, and again after a failure.
func (r *run) grow(g *growth) {
	if r.violation != nil {
		return
	}
	g.attempts++
	r.note(fmt.Sprintf("growing %s to %d partitions (attempt %d)", g.topic.Name, g.topic.GrowTo, g.attempts))
	req := kmsg.NewPtrCreatePartitionsRequest()
	req.Version = createPartitionsVersion
	req.TimeoutMillis = int32(adminTimeout.Milliseconds())
	topic := kmsg.NewCreatePartitionsRequestTopic()
	topic.Topic, topic.Count = g.topic.Name, int32(g.topic.GrowTo)
	req.Topics = append(req.Topics, topic)
	r.admin.request(clientAddress(1+g.attempts%len(r.nodes)), req, func(resp kmsg.Response, err error) {
		code := kerr.UnknownServerError.Code
		if err == nil && len(resp.(*kmsg.CreatePartitionsResponse).Topics) == 1 {
			code = resp.(*kmsg.CreatePartitionsResponse).Topics[0].ErrorCode
		}
		switch code {
		case 0:
			r.grown(g)
		case kerr.InvalidPartitions.Code:
			// Already this many, if an earlier attempt did it: the
			// metadata says.
			r.learnGrowth(g)
		default:
			r.retryAdmin(func() { r.grow(g) })
		}
	})
}

// grown takes the controller's word that the topic has the new count.
func (r *run) grown(g *growth) {
	if !g.grown {
		g.grown = true
		r.note(fmt.Sprintf("%s grown to %d partitions", g.topic.Name, g.topic.GrowTo))
	}
	r.learnGrowth(g)
}

// learnGrowth reads the topic's metadata until every partition up to the
// new count is there and led, learns the new partitions' replicas, and
// starts the producers on them. Before the growth is confirmed, a topic
// with fewer partitions sends it back to asking for the count.
func (r *run) learnGrowth(g *growth) {
	if r.violation != nil {
		return
	}
	g.attempts++
	req := kmsg.NewPtrMetadataRequest()
	req.Version = metadataVersion
	topic := kmsg.NewMetadataRequestTopic()
	topic.Topic = kmsg.StringPtr(g.topic.Name)
	req.Topics = append(req.Topics, topic)
	r.admin.request(clientAddress(1+g.attempts%len(r.nodes)), req, func(resp kmsg.Response, err error) {
		if err != nil {
			r.retryAdmin(func() { r.learnGrowth(g) })
			return
		}
		replicas, led, count := r.grownReplicas(g, resp.(*kmsg.MetadataResponse))
		switch {
		case !g.grown && count >= g.topic.GrowTo:
			// An earlier attempt grew it; its answer was lost.
			r.grown(g)
		case !g.grown:
			r.retryAdmin(func() { r.grow(g) })
		case !led:
			r.retryAdmin(func() { r.learnGrowth(g) })
		default:
			for tp, set := range replicas {
				r.replicas[tp] = set
			}
			g.learned = true
			r.note(fmt.Sprintf("%s's new partitions led", g.topic.Name))
			r.startGrownLanes(g.topic)
		}
	})
}

// grownReplicas reads a Metadata answer for a growing topic: the replica
// sets of its new partitions, whether every partition up to the new count
// is led, and how many partitions the answer shows.
func (r *run) grownReplicas(g *growth, resp *kmsg.MetadataResponse) (map[history.TopicPartition][]int32, bool, int) {
	replicas := map[history.TopicPartition][]int32{}
	if len(resp.Topics) != 1 || resp.Topics[0].ErrorCode != 0 {
		return replicas, false, 0
	}
	t := resp.Topics[0]
	led := 0
	for _, p := range t.Partitions {
		if p.Partition < 0 || int(p.Partition) >= g.topic.GrowTo || p.ErrorCode != 0 || p.Leader < 0 {
			continue
		}
		led++
		if int(p.Partition) >= g.topic.Partitions {
			replicas[history.TopicPartition{Topic: g.topic.Name, Partition: p.Partition}] = append([]int32(nil), p.Replicas...)
		}
	}
	return replicas, led == g.topic.GrowTo, len(t.Partitions)
}

// retryAdmin runs f again after the admin's retry delay.
func (r *run) retryAdmin(f func()) {
	r.kernel.Schedule(int64(adminRetryDelay), nil, "workload.admin-retry", f)
}

// startGrownLanes starts every producer that writes all of the topic on
// its new partitions, and has the group's lag monitors read them too.
func (r *run) startGrownLanes(t scenario.Topic) {
	for _, d := range r.producers {
		if d.settings.Topic != t.Name || len(d.settings.Partitions) > 0 {
			continue
		}
		for p := int32(t.Partitions); p < int32(t.GrowTo); p++ {
			l := d.addLane(r, history.TopicPartition{Topic: t.Name, Partition: p})
			for range d.loops() {
				r.sendNext(l)
			}
		}
	}
	for _, d := range r.offsetReaders {
		if d.topic != t.Name {
			continue
		}
		for p := int32(t.Partitions); p < int32(t.GrowTo); p++ {
			d.partitions = append(d.partitions, history.TopicPartition{Topic: t.Name, Partition: p})
		}
	}
}
