package broker

import (
	"testing"
)

// The controller fences a broker a session timeout after its last
// heartbeat by the controller's clock; the broker trusts its last unfenced
// heartbeat for part of a session by its own clock. With the broker's
// clock slow and the controller's fast, at the simulator's drift bounds
// (0.8 and 1.25), the broker must have stopped trusting it by the time it
// is fenced: a successor leader's coordinator takes commits from then on,
// and a broker still leased would answer OffsetFetch with offsets moved
// past (scenarios/regressions/cluster-nonlinearizable-committed-offset-
// clock-drift-4.txt, where three quarters of a session was too long).
func TestAStrandedBrokerOnASlowClockIsOutOfLeaseWhenFenced(t *testing.T) {
	c := newTestCluster(t, 3, 31)
	c.awaitBrokers(c.ids...)
	controller := c.controllerLeader()
	stranded := c.someNonController()
	c.nodes[stranded].machine.Clock.SetRate(0.8)
	c.nodes[controller].machine.Clock.SetRate(1.25)
	lifecycle := c.nodes[stranded].broker.lifecycle
	// A heartbeat sent and answered at the new rates renews the lease.
	c.run(2 * c.nodes[stranded].config.HeartbeatInterval)
	if !lifecycle.holdsLease() {
		t.Fatal("the broker holds no lease before the fault: the test does not test one running out")
	}

	var others []string
	for _, id := range c.ids {
		if id != stranded {
			others = append(others, clusterHost(id))
		}
	}
	c.network.Partition([]string{clusterHost(stranded)}, others)
	c.runUntil("the controller fences the stranded broker", 4*c.nodes[stranded].config.SessionTimeout, func() bool {
		b := c.nodes[controller].broker.image.Brokers[stranded]
		return b != nil && b.Fenced
	})
	if !c.nodes[controller].broker.controller.IsActive() {
		t.Fatalf("node %d is no longer the active controller: the test compares the wrong clocks", controller)
	}
	if lifecycle.holdsLease() {
		t.Fatalf("broker %d still trusts its last heartbeat when the controller has fenced it", stranded)
	}
}
