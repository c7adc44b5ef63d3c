package clusterworkload

import (
	"fmt"
	"math/rand/v2"
	"slices"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"sluice/sim/kernel"
	"sluice/sim/scenario"
)

// Electing leaders (scenario.Topic's ElectEvery): every ElectEvery in the
// safety phase an operator runs ElectLeaders for every partition of a
// topic the clients use, sent to node after node (each forwards it to the
// active controller) until one answers for the partitions, as
// kafka-leader-election.sh would be run again. Mostly a preferred
// election: each partition's first replica takes over if it is in the ISR
// and may lead, the step that undoes the leadership skew failures leave.
// Sometimes an unclean one: a leaderless partition gets a leader from
// outside its ISR, whatever the topic's config.
//
// What it promises: a preferred election is a clean one, so every check
// holds as before; an unclean one may lose acknowledged writes where it
// elected outside the ISR (lossPermitted counts the topic as allowing
// unclean elections from the first such request). And every answer is one
// Kafka's controller gives (elect-leaders-refused otherwise).

const (
	electLeadersVersion = 2
	// electAttemptsMax bounds the nodes one round asks.
	electAttemptsMax = 6
	// electUncleanChance is the share of rounds that elect uncleanly.
	electUncleanChance = 0.2
)

// elector is one topic's operator of leader elections.
type elector struct {
	topic scenario.Topic
	rng   *rand.Rand
	// busy is set while a round is under way; the liveness phase waits
	// for none to be.
	busy bool
	// uncleanAsked is set once an unclean election was sent.
	uncleanAsked bool
	// rounds counts the rounds begun; elected the partitions an answer
	// said were given a leader; requests the requests sent, to spread
	// them over the nodes.
	rounds, elected, requests int
}

// startElections sets every elected topic's operator going.
func (r *run) startElections() {
	for _, t := range r.scenario.Topics {
		if t.ElectEvery == 0 {
			continue
		}
		e := &elector{topic: t, rng: kernel.NewRand(r.scenario.Seed, "workload/elections/"+t.Name)}
		r.electors = append(r.electors, e)
		r.kernel.Schedule(int64(t.ElectEvery), nil, "workload.elect-leaders", func() { r.electRound(e) })
	}
}

// electing reports whether a round is still under way.
func (r *run) electing() bool {
	return slices.ContainsFunc(r.electors, func(e *elector) bool { return e.busy })
}

// electRound begins one round, and schedules the next, until the
// liveness phase.
func (r *run) electRound(e *elector) {
	if r.stopSending || r.violation != nil {
		return
	}
	r.kernel.Schedule(int64(e.topic.ElectEvery), nil, "workload.elect-leaders", func() { r.electRound(e) })
	if e.busy {
		return
	}
	unclean := e.rng.Float64() < electUncleanChance
	if unclean {
		e.uncleanAsked = true
	}
	e.busy = true
	e.rounds++
	r.electLeaders(e, unclean, 0)
}

// electLeaders sends one round's request to the next node, and again to
// the one after while no controller answered for the partitions.
func (r *run) electLeaders(e *elector, unclean bool, attempt int) {
	node := 1 + e.requests%r.scenario.Cluster.Nodes
	e.requests++
	req := kmsg.NewPtrElectLeadersRequest()
	req.Version = electLeadersVersion
	req.TimeoutMillis = int32(adminTimeout.Milliseconds())
	if unclean {
		req.ElectionType = 1
	}
	topic := kmsg.NewElectLeadersRequestTopic()
	topic.Topic = e.topic.Name
	for p := range r.partitionCount(e.topic) {
		topic.Partitions = append(topic.Partitions, int32(p))
	}
	req.Topics = append(req.Topics, topic)
	r.admin.request(clientAddress(node), req, func(resp kmsg.Response, err error) {
		answered := false
		if err == nil {
			answered = r.electionAnswer(e, node, unclean, resp.(*kmsg.ElectLeadersResponse))
		}
		if answered || r.violation != nil || attempt+1 >= electAttemptsMax {
			e.busy = false
			return
		}
		r.retryAdmin(func() { r.electLeaders(e, unclean, attempt+1) })
	})
}

// electionAnswer judges an answer and reports whether a controller gave
// it (rather than refusing it as a whole or for want of one).
func (r *run) electionAnswer(e *elector, node int, unclean bool, resp *kmsg.ElectLeadersResponse) bool {
	if resp.ErrorCode != 0 {
		return false
	}
	retry := false
	for _, t := range resp.Topics {
		for _, p := range t.Partitions {
			switch code := p.ErrorCode; {
			case code == 0:
				e.elected++
				r.note(fmt.Sprintf("n%d elected a leader of %s-%d (unclean %v)", node, t.Topic, p.Partition, unclean))
			case code == kerr.ElectionNotNeeded.Code, code == kerr.EligibleLeadersNotAvailable.Code,
				code == kerr.PreferredLeaderNotAvailable.Code && !unclean:
			case kerr.IsRetriable(kerr.ErrorForCode(code)):
				retry = true
			default:
				r.fail("elect-leaders-refused", fmt.Sprintf("n%d answered %s-%d: %v", node, t.Topic, p.Partition, kerr.ErrorForCode(code)))
			}
		}
	}
	return !retry
}

// electionCounts sums the operators' rounds and partitions elected.
func (r *run) electionCounts() (rounds, elected int) {
	for _, e := range r.electors {
		rounds += e.rounds
		elected += e.elected
	}
	return rounds, elected
}
