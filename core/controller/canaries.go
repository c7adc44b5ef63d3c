package controller

// Planted bugs (core.Canaries) that the simulator must catch. Production
// never switches them on.
const (
	// CanaryUncleanElection makes the controller elect a replica outside
	// the ISR when no ISR member may lead, as if every topic set
	// unclean.leader.election.enable: the new leader may lack
	// acknowledged writes, which are then lost (and followers that had
	// them must cut below their high watermark).
	CanaryUncleanElection = "controller-unclean-election"
	// CanaryPreferredOutsideISR makes a preferred leader election
	// (ElectLeaders) elect the partition's first replica even when it has
	// fallen out of the ISR, alone in the new ISR: it may lack
	// acknowledged writes, which are then lost.
	CanaryPreferredOutsideISR = "controller-preferred-outside-isr"
	// CanaryReassignBeforeCaughtUp makes a partition reassignment count
	// its target's new members as in sync from the start, so it completes
	// at once: the old replicas go, a new member that has fetched nothing
	// may lead, and acknowledged writes are lost.
	CanaryReassignBeforeCaughtUp = "controller-reassign-before-caught-up"
	// CanaryUnfenceBeforeCaughtUp unfences a broker once its metadata
	// reaches its registration, not the records that fenced it and moved
	// its leaderships away (the bug cluster seed 5015 found): back from a
	// strand with a stale image, it renews its lease and answers as the
	// coordinator and leader it no longer is.
	CanaryUnfenceBeforeCaughtUp = "controller-unfence-before-caught-up"
	// CanaryCaughtUpBeforeCaughtUp takes any heartbeat of an unfenced
	// deposed broker for one caught up (a BrokerCaughtUpRecord), whatever
	// metadata it has applied: new leaders stop waiting for a former
	// leader that may still serve on its lease.
	CanaryCaughtUpBeforeCaughtUp = "controller-caught-up-before-caught-up"
)
