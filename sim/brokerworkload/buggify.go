package brokerworkload

import (
	"slices"

	"sluice/core"
	"sluice/sim"
)

// reachableSites lists the BUGGIFY sites one broker alone can reach: its
// own fetch wait, the group coordinator's sessions, its partitions' logs
// (and the metadata log's), and the election timeout its sole quorum
// voter draws at start before it campaigns. The other sites need a second
// node: a follower whose lag is judged (replica), two ISR members to
// choose from (controller), a voter that follows a resigning leader or
// fetches a snapshot from it (quorum).
func reachableSites() []string {
	sites := sim.BuggifySitesIn("broker", "group", "log")
	sites = append(sites, core.BuggifyQuorumElectionTimeoutShortest)
	slices.Sort(sites)
	return sites
}
