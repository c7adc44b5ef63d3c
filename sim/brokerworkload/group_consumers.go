package brokerworkload

import (
	"fmt"
	"slices"

	"sluice/jepsen/history"
	"sluice/sim/simclient"
)

// consumerDriver is one group consumer and the client machine it runs on.
type consumerDriver struct {
	index    int
	client   *simclient.Client
	consumer *simclient.GroupConsumer
}

// startGroup builds the seed's group consumers, all subscribed to the
// workload's topic, and starts them. Their clients join r.clients, so the
// nemesis crashes them like any other client.
func (r *run) startGroup() {
	g := r.settings.group
	for i, cs := range g.consumers {
		name := fmt.Sprintf("c%d", i+1)
		c := r.newClient(name)
		config := simclient.GroupConsumerConfig{
			Group:              groupName,
			Topic:              topicName,
			Assignors:          cs.assignors,
			SessionTimeout:     g.sessionTimeout,
			RebalanceTimeout:   g.rebalanceTimeout,
			FetchMaxWait:       g.fetchMaxWait,
			VerifyCommitChance: g.verifyCommitChance,
		}
		if cs.static {
			config.InstanceID = name + "-instance"
		}
		d := &consumerDriver{index: i + 1, client: c}
		d.consumer = simclient.NewGroupConsumer(c, config, r.recorder, r.processes)
		d.consumer.Start()
		r.consumers = append(r.consumers, d)
		r.clients = append(r.clients, c)
	}
}

// consumerOf returns the consumer running on c, nil if c runs none.
func (r *run) consumerOf(c *simclient.Client) *consumerDriver {
	for _, d := range r.consumers {
		if d.client == c {
			return d
		}
	}
	return nil
}

// groupSettled reports whether the group has settled, as its consumers see
// it: every consumer up and stable in one generation, whose assignments
// cover every partition exactly once. It returns each partition's owner,
// or what is still missing.
func (r *run) groupSettled() (generation int32, owners map[history.TopicPartition]*consumerDriver, problem string) {
	owners = map[history.TopicPartition]*consumerDriver{}
	generation = -1
	for _, d := range r.consumers {
		m := d.consumer.Membership()
		switch {
		case !m.Stable:
			return -1, nil, fmt.Sprintf("c%d not stable (generation %d, member %q)", d.index, m.Generation, m.MemberID)
		case generation >= 0 && m.Generation != generation:
			return -1, nil, fmt.Sprintf("c%d in generation %d, others in %d", d.index, m.Generation, generation)
		}
		generation = m.Generation
		for _, tp := range m.Assigned {
			if other := owners[tp]; other != nil {
				return -1, nil, fmt.Sprintf("%s assigned to c%d and c%d in generation %d", tp, other.index, d.index, generation)
			}
			owners[tp] = d
		}
	}
	for p := range int32(r.settings.partitions) {
		tp := history.TopicPartition{Topic: topicName, Partition: p}
		if owners[tp] == nil {
			return -1, nil, fmt.Sprintf("%s assigned to nobody in generation %d", tp, generation)
		}
	}
	return generation, owners, ""
}

// consumerProcesses lists every history process a group consumer used.
func (r *run) consumerProcesses() []int {
	var processes []int
	for _, d := range r.consumers {
		processes = append(processes, d.consumer.Processes()...)
	}
	slices.Sort(processes)
	return processes
}
