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
			FetchConfig:        simclient.FetchConfig{FetchMaxWait: g.fetchMaxWait},
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

// groupMembers names the group's consumers c1, c2, ... for the drain.
func (r *run) groupMembers() []simclient.GroupMember {
	members := make([]simclient.GroupMember, 0, len(r.consumers))
	for _, d := range r.consumers {
		members = append(members, simclient.GroupMember{Name: fmt.Sprintf("c%d", d.index), Consumer: d.consumer})
	}
	return members
}

// groupSettled reports whether the group has settled over every partition
// of the topic (simclient.GroupSettled).
func (r *run) groupSettled() (generation int32, owners map[history.TopicPartition]simclient.GroupMember, problem string) {
	var all []history.TopicPartition
	for p := range int32(r.settings.partitions) {
		all = append(all, history.TopicPartition{Topic: topicName, Partition: p})
	}
	return simclient.GroupSettled(r.groupMembers(), all)
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
