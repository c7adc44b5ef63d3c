package clusterworkload

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"sluice/core/metadata"
	"sluice/sim/kernel"
	"sluice/sim/scenario"
)

// Altering a topic's configs (scenario.Topic's AlterEvery): every
// AlterEvery in the safety phase an operator changes one config of a
// topic the clients use, with IncrementalAlterConfigs sent to a node
// after another (each forwards it to the active controller) until one
// confirms it, as kafka-configs.sh --alter would be run again:
//   - unclean.leader.election.enable, on and off in turn: what an operator
//     does to bring back a partition whose in-sync replicas are all down,
//     and undoes once it is back;
//   - min.insync.replicas, to 1 up to the replication factor.
//
// What the changes promise: a write acknowledged to acks=all is lost only
// where the controller elected a leader outside the ISR while the topic
// allowed it (lossPermitted), and every replica agrees again once the
// cluster has converged, whatever the config says by then. And every
// broker follows the metadata log: once converged, each live node
// describes the configs as the last confirmed change left them
// (config-not-applied); a change whose answer was lost may have taken
// effect too, so its value is allowed as well.

const (
	incrementalAlterConfigsVersion = 1
	describeConfigsVersion         = 4
	// alterAttemptsMax bounds the nodes one change is sent to.
	alterAttemptsMax = 6
)

// alteredConfigs are the configs the operator changes, in the order the
// checks name them.
var alteredConfigs = []string{metadata.ConfigUncleanLeaderElection, metadata.ConfigMinInsyncReplicas}

// alterer is one topic's operator of configs.
type alterer struct {
	topic scenario.Topic
	rng   *rand.Rand
	// busy is set while a change is under way: a round finds the last
	// one still unanswered, and the liveness phase waits for none to be.
	busy bool
	// asked is each config's value as the operator last asked for it,
	// and confirmed as the last confirmed change set it (the topic's own
	// at first). unsure are the values of changes whose outcome no
	// answer told: such a request may still be on its way to the
	// controller (a broker forwards it for a while), and take effect
	// after any later change.
	asked, confirmed map[string]string
	unsure           map[string][]string
	// uncleanAsked is set once a change turning unclean leader election
	// on was sent, whatever became of it.
	uncleanAsked bool
	// changes counts the changes begun and those confirmed; requests
	// the requests sent, to spread them over the nodes.
	changes, changesConfirmed, requests int
}

// startAlters sets every altered topic's operator going.
func (r *run) startAlters() {
	for _, t := range r.scenario.Topics {
		if t.AlterEvery == 0 {
			continue
		}
		initial := map[string]string{
			metadata.ConfigUncleanLeaderElection: strconv.FormatBool(t.Unclean),
			metadata.ConfigMinInsyncReplicas:     strconv.Itoa(t.MinInsync),
		}
		a := &alterer{
			topic:     t,
			rng:       kernel.NewRand(r.scenario.Seed, "workload/alters/"+t.Name),
			asked:     maps.Clone(initial),
			confirmed: initial,
			unsure:    map[string][]string{},
		}
		r.alterers = append(r.alterers, a)
		r.kernel.Schedule(int64(t.AlterEvery), nil, "workload.alter-configs", func() { r.alterRound(a) })
	}
}

// altering reports whether a change is still under way.
func (r *run) altering() bool {
	return slices.ContainsFunc(r.alterers, func(a *alterer) bool { return a.busy })
}

// uncleanAllowed reports whether topic allowed unclean leader elections
// at some point of the run: created so, or an operator asked for it (a
// config change, or an unclean ElectLeaders: elections.go).
func (r *run) uncleanAllowed(topic string) bool {
	if t, ok := r.scenario.Topic(topic); ok && t.Unclean {
		return true
	}
	return slices.ContainsFunc(r.alterers, func(a *alterer) bool { return a.topic.Name == topic && a.uncleanAsked }) ||
		slices.ContainsFunc(r.electors, func(e *elector) bool { return e.topic.Name == topic && e.uncleanAsked })
}

// alterRound begins one change, and schedules the next round, until the
// liveness phase.
func (r *run) alterRound(a *alterer) {
	if r.stopSending || r.violation != nil {
		return
	}
	r.kernel.Schedule(int64(a.topic.AlterEvery), nil, "workload.alter-configs", func() { r.alterRound(a) })
	if a.busy {
		return
	}
	name, value := a.nextChange()
	if name == metadata.ConfigUncleanLeaderElection && value == "true" {
		a.uncleanAsked = true
	}
	a.asked[name] = value
	a.busy = true
	a.changes++
	r.alterConfig(a, name, value, 0)
}

// nextChange draws the next change: unclean leader election turned the
// other way from the last value asked, or a new min.insync.replicas.
func (a *alterer) nextChange() (name, value string) {
	if a.rng.IntN(2) == 0 {
		name = metadata.ConfigUncleanLeaderElection
		return name, strconv.FormatBool(a.asked[name] != "true")
	}
	return metadata.ConfigMinInsyncReplicas, strconv.Itoa(1 + a.rng.IntN(a.topic.Replication))
}

// alterConfig sends one change to the next node, and again to the one
// after while the answer is not a confirmation.
func (r *run) alterConfig(a *alterer, name, value string, attempt int) {
	node := 1 + a.requests%r.scenario.Cluster.Nodes
	a.requests++
	req := kmsg.NewPtrIncrementalAlterConfigsRequest()
	req.Version = incrementalAlterConfigsVersion
	resource := kmsg.NewIncrementalAlterConfigsRequestResource()
	resource.ResourceType, resource.ResourceName = kmsg.ConfigResourceTypeTopic, a.topic.Name
	config := kmsg.NewIncrementalAlterConfigsRequestResourceConfig()
	config.Name, config.Op, config.Value = name, kmsg.IncrementalAlterConfigOpSet, kmsg.StringPtr(value)
	resource.Configs = append(resource.Configs, config)
	req.Resources = append(req.Resources, resource)
	r.admin.request(clientAddress(node), req, func(resp kmsg.Response, err error) {
		code := kerr.UnknownServerError.Code
		if err == nil {
			if rs := resp.(*kmsg.IncrementalAlterConfigsResponse).Resources; len(rs) == 1 {
				code = rs[0].ErrorCode
			}
		}
		switch {
		case code == 0:
			a.confirmed[name] = value
			a.changesConfirmed++
			a.busy = false
			r.note(fmt.Sprintf("n%d set %s %s=%s", node, a.topic.Name, name, value))
			return
		case err == nil && !kerr.IsRetriable(kerr.ErrorForCode(code)) && code != kerr.UnknownServerError.Code:
			// Every change the operator draws is valid: refusing one is
			// a broken promise, not a fault.
			r.fail("config-alter-refused", fmt.Sprintf("n%d refused %s=%s for %s: %v", node, name, value, a.topic.Name, kerr.ErrorForCode(code)))
			a.busy = false
			return
		}
		if code != kerr.NotController.Code && !slices.Contains(a.unsure[name], value) {
			// Timed out, or refused after the controller may have
			// applied it: it may yet have taken effect.
			a.unsure[name] = append(a.unsure[name], value)
		}
		if attempt+1 < alterAttemptsMax && r.violation == nil {
			r.retryAdmin(func() { r.alterConfig(a, name, value, attempt+1) })
			return
		}
		a.busy = false
	})
}

// awaitAlteredConfigs waits, once the cluster has converged, for every
// live node to describe each altered config as the operator left it
// (see allowedValues), and the same as every other node.
func (r *run) awaitAlteredConfigs(deadline int64) bool {
	for _, a := range r.alterers {
		problem := "not asked yet"
		for r.violation == nil {
			seen, ok := r.describeAlteredConfigs(a, deadline)
			if !ok {
				return false
			}
			if problem = a.configsApart(seen); problem == "" {
				break
			}
			next := r.kernel.Now() + int64(replicaCheckInterval)
			if next > deadline {
				r.fail("config-not-applied", fmt.Sprintf("%v after the heal, %s", r.scenario.Liveness, problem))
				return false
			}
			r.runWhile(next, func() bool { return true })
		}
	}
	return r.violation == nil
}

// description is what one node said of a topic's altered configs.
type description struct {
	node int
	// values are the configs described; nil when the node did not
	// answer or refused.
	values map[string]string
}

// describeAlteredConfigs asks every live node to describe a's altered
// configs and returns the answers; false when the deadline passed first.
func (r *run) describeAlteredConfigs(a *alterer, deadline int64) ([]description, bool) {
	var seen []description
	for _, n := range r.nodes {
		if n.up {
			seen = append(seen, description{node: n.id})
		}
	}
	build := func() kmsg.Request {
		req := kmsg.NewPtrDescribeConfigsRequest()
		req.Version = describeConfigsVersion
		resource := kmsg.NewDescribeConfigsRequestResource()
		resource.ResourceType, resource.ResourceName = kmsg.ConfigResourceTypeTopic, a.topic.Name
		resource.ConfigNames = alteredConfigs
		req.Resources = append(req.Resources, resource)
		return req
	}
	answered := func(n *node, resp kmsg.Response, err error) {
		if err != nil {
			return
		}
		rs := resp.(*kmsg.DescribeConfigsResponse).Resources
		if len(rs) != 1 || rs[0].ErrorCode != 0 {
			return
		}
		values := map[string]string{}
		for _, c := range rs[0].Configs {
			if c.Value != nil {
				values[c.Name] = *c.Value
			}
		}
		seen[slices.IndexFunc(seen, func(d description) bool { return d.node == n.id })].values = values
	}
	if !r.askEveryLiveNode(deadline, build, answered) {
		r.livenessFailed(fmt.Sprintf("nodes did not describe the configs of %s within %v of the heal", a.topic.Name, r.scenario.Liveness))
		return nil, false
	}
	return seen, true
}

// configsApart names a node that did not answer, or whose configs differ
// from another's or from what the operator left, or returns "".
func (a *alterer) configsApart(seen []description) string {
	var first map[string]string
	firstNode := 0
	for _, d := range seen {
		node, values := d.node, d.values
		if values == nil {
			return fmt.Sprintf("n%d did not describe %s", node, a.topic.Name)
		}
		for _, name := range alteredConfigs {
			if allowed := a.allowedValues(name); !slices.Contains(allowed, values[name]) {
				return fmt.Sprintf("n%d describes %s %s=%q; the operator left it at %s", node, a.topic.Name, name, values[name], strings.Join(allowed, " or "))
			}
			if first != nil && values[name] != first[name] {
				return fmt.Sprintf("n%d describes %s %s=%q, n%d %q", node, a.topic.Name, name, values[name], firstNode, first[name])
			}
		}
		if first == nil {
			first, firstNode = values, node
		}
	}
	return ""
}

// allowedValues are the values a config may have once everything settled:
// what the last confirmed change set, or a value sent since whose outcome
// is unknown.
func (a *alterer) allowedValues(name string) []string {
	return append([]string{a.confirmed[name]}, a.unsure[name]...)
}

// alterCounts sums the operators' changes begun and confirmed.
func (r *run) alterCounts() (changes, confirmed int) {
	for _, a := range r.alterers {
		changes += a.changes
		confirmed += a.changesConfirmed
	}
	return changes, confirmed
}
