package clusterworkload

import (
	"fmt"
	"slices"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// The liveness phase's last step: every node lists every broker. A
// broker that has healed registers again, catches up with the metadata
// log and is unfenced; until then the others leave it out of their
// Metadata answers, so no client learns of it. The replicas' catch-up
// (replicas.go) cannot show a broker left fenced for good, since a fenced
// broker still replicates. The harness that runs the real binary waits
// for the same thing before every test (jepsen/harness WaitBrokers).

// awaitBrokersListed waits, until deadline, for every node's Metadata
// answer to list every broker; "broker-liveness" otherwise.
func (r *run) awaitBrokersListed(deadline int64) bool {
	for r.violation == nil {
		problem := r.brokersUnlisted(deadline)
		if problem == "" {
			return true
		}
		next := r.kernel.Now() + int64(replicaCheckInterval)
		if next > deadline {
			r.fail("broker-liveness", fmt.Sprintf("not every node lists every broker %v after the heal: %s; nodes:%s",
				r.scenario.Liveness, problem, r.describeNodes()))
			return false
		}
		r.runWhile(next, func() bool { return true })
	}
	return false
}

// brokersUnlisted asks the nodes for their Metadata, one after another,
// and says what the first that does not list every broker answered; ""
// when all do.
func (r *run) brokersUnlisted(deadline int64) string {
	for _, n := range r.nodes {
		done, problem := false, ""
		req := kmsg.NewPtrMetadataRequest()
		req.Version = metadataVersion
		req.Topics = []kmsg.MetadataRequestTopic{} // none: only the brokers
		r.admin.request(clientAddress(n.id), req, func(resp kmsg.Response, err error) {
			done = true
			if err != nil {
				problem = fmt.Sprintf("%s: %v", n.name, err)
				return
			}
			var listed []int32
			for _, b := range resp.(*kmsg.MetadataResponse).Brokers {
				listed = append(listed, b.NodeID)
			}
			slices.Sort(listed)
			if len(listed) != len(r.nodes) {
				problem = fmt.Sprintf("%s lists brokers %v", n.name, listed)
			}
		})
		if !r.runWhile(deadline, func() bool { return !done }) {
			return n.name + ": no Metadata answer"
		}
		if problem != "" {
			return problem
		}
	}
	return ""
}
