package compat

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"sluice/jepsen/harness"
)

// failoverGroupRecordsPerPartition is how many records each partition
// gets before the coordinator's kill and again after it.
const failoverGroupRecordsPerPartition = 100

// failoverGroupMember is one client library's group member, started on a
// cluster: it reads into the ledger until closed.
type failoverGroupMember interface {
	close()
	logErrors(t *testing.T)
}

// TestClusterGroupCoordinatorFailoverClients is
// TestClusterGroupCoordinatorFailover for the other Go clients' group
// consumers: a sarama ConsumerGroup (which commits its marks every second)
// and a kafka-go Reader (which commits each message synchronously) each
// consume a 3-node cluster's topic, and the group's coordinator, the
// member's first seed broker, is killed with SIGKILL. The member must
// find the new coordinator and go on: every record produced before and
// after the kill read at least once, none with a value other than the one
// produced there, none read again after a commit covering it was
// acknowledged (the coordinator's successor must have every acknowledged
// commit); and once it closes, the group's committed offsets are every
// partition's end. The errors the clients
// report on the way (connections refused, NOT_COORDINATOR) are logged,
// not failures.
func TestClusterGroupCoordinatorFailoverClients(t *testing.T) {
	cluster := startCompatCluster(t)
	for _, client := range []struct {
		name  string
		start func(t *testing.T, brokers []string, group, topic string, ledger *groupLedger) failoverGroupMember
	}{
		{"sarama", func(t *testing.T, brokers []string, group, topic string, ledger *groupLedger) failoverGroupMember {
			return startSaramaGroupMember(t, t, brokers, group, topic, "S1", ledger)
		}},
		{"kafka-go", func(t *testing.T, brokers []string, group, topic string, ledger *groupLedger) failoverGroupMember {
			return startKafkaGoGroupReader(t, brokers, group, topic, "K1", ledger)
		}},
	} {
		// The member is closed within the step, so the step is its
		// lifetime too.
		t.Run(client.name, func(t *testing.T) {
			newClientSteps(t, client.name).step(groupStep, false, func(t *testing.T) {
				topic, group := "failover-"+client.name, "failover-"+client.name
				createClusterTopic(t, cluster, topic)
				live := cluster.Bootstrap()[0]
				dead := groupCoordinator(t, live, group)
				ledger := newGroupLedger()
				member := client.start(t, coordinatorFirst(cluster, dead), group, topic, ledger)
				defer member.close()
				defer member.logErrors(t)

				ledger.addProduced(produceToPartitions(t, live, topic, sameCount(failoverPartitions, failoverGroupRecordsPerPartition)))
				ledger.waitFor(t, "the member to read the records produced before the kill", ledger.allReadLocked)

				if now := groupCoordinator(t, live, group); now != dead {
					t.Fatalf("the group's coordinator moved from node %d to %d before the kill", dead, now)
				}
				if err := cluster.Node(dead).Kill(); err != nil {
					t.Fatal(err)
				}
				t.Logf("killed node %d, the coordinator of group %s", dead, group)
				defer restartAndWait(t, cluster, dead, topic)
				live = liveAddress(t, cluster, dead)
				// The producing helper's ListOffsets does not retry a
				// partition whose leader is gone; the member itself is
				// given no such grace.
				waitLeadersAwayFrom(t, cluster, topic, dead)
				ledger.addProduced(produceToPartitions(t, live, topic, sameCount(failoverPartitions, failoverGroupRecordsPerPartition)))
				ledger.waitFor(t, "the member to read the records produced after the kill", ledger.allReadLocked)
				reportProblems(t, "delivery", checkAtLeastOnce(ledger.producedSnapshot(), ledger.readsSnapshot()))

				member.close() // commits what it has not yet, and leaves
				checkCommitted(t, live, group, topic, endOffsetsOf(ledger.producedSnapshot()))
				if now := groupCoordinator(t, live, group); now == dead {
					t.Errorf("the group's coordinator is still the dead node %d", dead)
				}
			})
		})
	}
}

// restartAndWait starts a killed node again and waits for the cluster to
// be whole: the next client's turn needs every replica, and the cluster's
// stop would find a node still starting before it listens for signals.
func restartAndWait(t *testing.T, cluster *harness.Cluster, dead int, topic string) {
	t.Helper()
	if err := cluster.Node(dead).Start(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), failoverWaitMax)
	defer cancel()
	if err := cluster.WaitHealthy(ctx, failoverWaitMax, topic); err != nil {
		t.Fatal(err)
	}
}

// waitLeadersAwayFrom waits until every partition of topic is led by a
// node other than dead, as the live nodes see it, and its new leaders
// list their end offsets (a leader just elected answers
// OFFSET_NOT_AVAILABLE until its high watermark has caught up, KIP-207).
func waitLeadersAwayFrom(t *testing.T, cluster *harness.Cluster, topic string, dead int) {
	t.Helper()
	deadline := time.Now().Add(failoverWaitMax)
	for {
		leaders := cluster.Leaders(topic)
		moved := len(leaders) == failoverPartitions
		for _, leader := range leaders {
			moved = moved && leader >= 0 && int(leader) != dead
		}
		if moved && endOffsetsListed(cluster, topic, dead) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("partitions of %s still led by the dead node %d (or none) after %v: %v", topic, dead, failoverWaitMax, leaders)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// groupCoordinator is the node FindCoordinator names for group.
func groupCoordinator(t *testing.T, address, group string) int {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), failoverWaitMax)
	defer cancel()
	client := newFranzGoClient(t, address, kgo.RetryTimeout(failoverWaitMax))
	defer client.Close()
	found := kadm.NewClient(client).FindGroupCoordinators(ctx, group)[group]
	if found.Err != nil {
		t.Fatalf("FindCoordinator for %s: %v", group, found.Err)
	}
	return int(found.NodeID)
}

// endOffsetsListed reports whether ListOffsets answers for every
// partition of topic, asked through a node other than dead.
func endOffsetsListed(cluster *harness.Cluster, topic string, dead int) bool {
	client, err := kgo.NewClient(kgo.SeedBrokers(cluster.Bootstrap()[slices.IndexFunc(cluster.Nodes(), func(n *harness.Node) bool { return n.ID != dead })]))
	if err != nil {
		return false
	}
	defer client.Close()
	ctx, cancel := context.WithTimeout(context.Background(), clientTimeout)
	defer cancel()
	listed, err := kadm.NewClient(client).ListEndOffsets(ctx, topic)
	return err == nil && listed.Error() == nil
}

// coordinatorFirst is the cluster's bootstrap list with the coordinator's
// address first: the node killed is the member's first seed broker, the
// hardest case, where a client that keeps asking its first seed is stuck.
func coordinatorFirst(cluster *harness.Cluster, coordinator int) []string {
	addresses := cluster.Bootstrap()
	i := slices.IndexFunc(cluster.Nodes(), func(n *harness.Node) bool { return n.ID == coordinator })
	return append([]string{addresses[i]}, slices.Delete(addresses, i, i+1)...)
}

// liveAddress is the client address of a node other than dead.
func liveAddress(t *testing.T, cluster *harness.Cluster, dead int) string {
	t.Helper()
	nodes := cluster.Nodes()
	i := slices.IndexFunc(nodes, func(n *harness.Node) bool { return n.ID != dead })
	if i < 0 {
		t.Fatalf("no node but %d", dead)
	}
	return cluster.Bootstrap()[i]
}
