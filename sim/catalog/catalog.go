package catalog

import (
	"sort"

	"sluice/sim"
	"sluice/sim/brokerworkload"
	"sluice/sim/clusterworkload"
	"sluice/sim/logworkload"
	"sluice/sim/quorumworkload"
)

// DefaultWorkload is what `sluice sim` runs without --workload.
const DefaultWorkload = clusterworkload.Name

func workloads() []sim.Workload {
	return []sim.Workload{
		logworkload.New(),
		brokerworkload.New(),
		quorumworkload.New(),
		clusterworkload.New(),
	}
}

// Workload finds a workload by name.
func Workload(name string) (sim.Workload, bool) {
	for _, w := range workloads() {
		if w.Name() == name {
			return w, true
		}
	}
	return nil, false
}

// WorkloadNames lists the workloads, sorted.
func WorkloadNames() []string {
	var names []string
	for _, w := range workloads() {
		names = append(names, w.Name())
	}
	sort.Strings(names)
	return names
}

// Canaries lists every planted bug, sorted by name.
func Canaries() []sim.Canary {
	var all []sim.Canary
	all = append(all, logworkload.Canaries()...)
	all = append(all, brokerworkload.Canaries()...)
	all = append(all, quorumworkload.Canaries()...)
	all = append(all, clusterworkload.Canaries()...)
	sort.Slice(all, func(i, j int) bool { return all[i].Name < all[j].Name })
	return all
}

// Canary finds a planted bug by name.
func Canary(name string) (sim.Canary, bool) {
	for _, c := range Canaries() {
		if c.Name == name {
			return c, true
		}
	}
	return sim.Canary{}, false
}
