package harness

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"time"
)

// FaultKind names one kind of fault the nemesis injects.
type FaultKind string

const (
	// FaultKill: SIGKILL one node (a partition or quorum leader, three
	// times in four), hold it down, restart it on the same data.
	FaultKill FaultKind = "kill"
	// FaultPause: SIGSTOP one node (leaders preferred), hold, SIGCONT.
	FaultPause FaultKind = "pause"
	// FaultPartition: cut the node-to-node links between two sides, both
	// ways, for replication and the metadata quorum alike: a leader
	// isolated from the rest, or a random minority from the majority.
	// Connections stall or reset (a coin decides). Clients still reach
	// every node, so an isolated leader keeps hearing from them.
	FaultPartition FaultKind = "partition"
	// FaultRolling: SIGTERM each node in turn, restart it, and wait for
	// every ISR to be full again before the next.
	FaultRolling FaultKind = "rolling"
	// FaultFullKill: SIGKILL every node at once, then restart them all.
	FaultFullKill FaultKind = "full-kill"
	// FaultSlow: delay every link to and from one node by 50-300 ms.
	FaultSlow FaultKind = "slow"
	// FaultClients: cut the links between the clients and one node
	// (leaders preferred), both ways, leaving its peers connected.
	FaultClients FaultKind = "clients"
	// FaultStrand: strand a partition's leader, in two partitions: first
	// its followers are split off (the majority fences them, so the
	// leader is its ISR alone), then the leader is isolated instead (the
	// majority fences it, and the partition has no in-sync replica left
	// that runs). With unclean.leader.election.enable a follower that
	// missed the leader's last writes is elected and those writes are
	// lost; without it the partition waits for its leader. Needs five
	// nodes, so that both splits leave a quorum.
	FaultStrand FaultKind = "strand"
)

// FaultKinds is every kind, in the order `sluice jepsen --faults` lists.
var FaultKinds = []FaultKind{FaultKill, FaultPause, FaultPartition, FaultRolling, FaultFullKill, FaultSlow, FaultClients, FaultStrand}

// ParseFaults reads a comma-separated list of fault kinds; "all" names
// every kind.
func ParseFaults(list string) ([]FaultKind, error) {
	if strings.TrimSpace(list) == "all" {
		return slices.Clone(FaultKinds), nil
	}
	var kinds []FaultKind
	for _, name := range strings.Split(list, ",") {
		name = strings.TrimSpace(name)
		if name == "" {
			continue
		}
		kind := FaultKind(name)
		if !slices.Contains(FaultKinds, kind) {
			return nil, fmt.Errorf("unknown fault %q: the faults are %s", name, joinKinds(FaultKinds))
		}
		if !slices.Contains(kinds, kind) {
			kinds = append(kinds, kind)
		}
	}
	return kinds, nil
}

func joinKinds(kinds []FaultKind) string {
	names := make([]string, len(kinds))
	for i, kind := range kinds {
		names[i] = string(kind)
	}
	return strings.Join(names, ",")
}

// FaultWindow is one fault as it happened: from when it was injected to
// when it was healed, in time since the run began.
type FaultWindow struct {
	Kind   FaultKind     `json:"kind"`
	Nodes  []int         `json:"nodes"`
	Detail string        `json:"detail"`
	Start  time.Duration `json:"start_ns"`
	End    time.Duration `json:"end_ns"`
	// Error says what went wrong injecting or healing it, if anything.
	Error string `json:"error,omitempty"`
}

func (w FaultWindow) String() string {
	text := fmt.Sprintf("%8.1fs – %8.1fs  %-9s nodes %v  %s", w.Start.Seconds(), w.End.Seconds(), w.Kind, w.Nodes, w.Detail)
	if w.Error != "" {
		text += "  ERROR: " + w.Error
	}
	return text
}

// NemesisTiming sets how long faults last and how long the cluster gets
// between them.
type NemesisTiming struct {
	// HoldMin and HoldMax bound how long a fault lasts (a uniform draw).
	HoldMin, HoldMax time.Duration
	// Quiet is the healthy time between two faults.
	Quiet time.Duration
	// FullKillDowntime is how long every node stays dead in a full kill.
	FullKillDowntime time.Duration
}

// nemesis injects faults of the given kinds into a cluster, one at a
// time, each kind once per round in a shuffled order, until its context
// ends; then it heals everything.
type nemesis struct {
	cluster *Cluster
	topic   string
	faults  []FaultKind
	timing  NemesisTiming
	random  *rand.Rand
	clock   func() time.Duration
	logf    func(format string, args ...any)

	mutex   sync.Mutex
	windows []FaultWindow
}

func (n *nemesis) run(ctx context.Context) {
	for ctx.Err() == nil {
		round := slices.Clone(n.faults)
		n.random.Shuffle(len(round), func(i, j int) { round[i], round[j] = round[j], round[i] })
		for _, kind := range round {
			if ctx.Err() != nil {
				return
			}
			n.inject(ctx, kind)
			sleep(ctx, n.timing.Quiet)
		}
	}
}

// inject runs one fault from injection to healing and records its
// window.
func (n *nemesis) inject(ctx context.Context, kind FaultKind) {
	window := FaultWindow{Kind: kind, Start: n.clock()}
	var err error
	switch kind {
	case FaultKill:
		err = n.kill(ctx, &window)
	case FaultPause:
		err = n.pause(ctx, &window)
	case FaultPartition:
		err = n.partition(ctx, &window)
	case FaultRolling:
		err = n.rolling(ctx, &window)
	case FaultFullKill:
		err = n.fullKill(ctx, &window)
	case FaultSlow:
		err = n.slow(ctx, &window)
	case FaultClients:
		err = n.cutClients(ctx, &window)
	case FaultStrand:
		err = n.strand(ctx, &window)
	default:
		panic("harness: unknown fault " + string(kind))
	}
	window.End = n.clock()
	if err != nil {
		window.Error = err.Error()
	}
	n.logf("fault %s", window)
	n.mutex.Lock()
	n.windows = append(n.windows, window)
	n.mutex.Unlock()
}

// Windows lists the faults injected so far.
func (n *nemesis) Windows() []FaultWindow {
	n.mutex.Lock()
	defer n.mutex.Unlock()
	return slices.Clone(n.windows)
}

// hold waits for a fault's duration, or until ctx ends.
func (n *nemesis) hold(ctx context.Context) {
	spread := n.timing.HoldMax - n.timing.HoldMin
	d := n.timing.HoldMin
	if spread > 0 {
		d += time.Duration(n.random.Int64N(int64(spread)))
	}
	sleep(ctx, d)
}

// target picks a node: three times in four a leader (of a partition of
// the topic, or of the metadata quorum), else any node.
func (n *nemesis) target() (int, string) {
	nodes := len(n.cluster.nodes)
	if n.random.IntN(4) > 0 {
		var leaders []int
		for _, leader := range n.cluster.Leaders(n.topic) {
			if leader > 0 && !slices.Contains(leaders, int(leader)) {
				leaders = append(leaders, int(leader))
			}
		}
		quorum := n.cluster.QuorumLeader()
		slices.Sort(leaders)
		choices := slices.Clone(leaders)
		if quorum > 0 {
			choices = append(choices, int(quorum))
		}
		if len(choices) > 0 {
			pick := choices[n.random.IntN(len(choices))]
			var roles []string
			if slices.Contains(leaders, pick) {
				roles = append(roles, "partition leader")
			}
			if int32(pick) == quorum {
				roles = append(roles, "quorum leader")
			}
			return pick, strings.Join(roles, ", ")
		}
	}
	return 1 + n.random.IntN(nodes), "random node"
}

func (n *nemesis) kill(ctx context.Context, window *FaultWindow) error {
	id, why := n.target()
	window.Nodes, window.Detail = []int{id}, "SIGKILL the "+why+", restart"
	node := n.cluster.Node(id)
	if err := node.Kill(); err != nil {
		return err
	}
	n.hold(ctx)
	return node.Start()
}

func (n *nemesis) pause(ctx context.Context, window *FaultWindow) error {
	id, why := n.target()
	window.Nodes, window.Detail = []int{id}, "SIGSTOP the "+why+", SIGCONT"
	node := n.cluster.Node(id)
	if err := node.Pause(); err != nil {
		return err
	}
	n.hold(ctx)
	return node.Resume()
}

func (n *nemesis) partition(ctx context.Context, window *FaultWindow) error {
	nodes := len(n.cluster.nodes)
	if nodes < 2 {
		window.Detail = "skipped: one node"
		return nil
	}
	if !partitionsSupported {
		window.Detail = "skipped: telling nodes apart needs Linux"
		return nil
	}
	mode := Stall
	if n.random.IntN(2) == 0 {
		mode = Reset
	}
	var minority []int
	if n.random.IntN(3) > 0 {
		id, why := n.target()
		minority = []int{id}
		window.Detail = fmt.Sprintf("isolate the %s (%s)", why, mode)
	} else {
		order := n.random.Perm(nodes)
		for _, i := range order[:1+n.random.IntN((nodes-1)/2+1)] {
			minority = append(minority, i+1)
		}
		slices.Sort(minority)
		window.Detail = fmt.Sprintf("split a minority off (%s)", mode)
	}
	var small, large []Endpoint
	for id := 1; id <= nodes; id++ {
		if slices.Contains(minority, id) {
			small = append(small, Endpoint(id))
		} else {
			large = append(large, Endpoint(id))
		}
	}
	window.Nodes = minority
	n.cluster.Links.Partition(mode, small, large)
	n.hold(ctx)
	n.cluster.Links.HealAll()
	return nil
}

func (n *nemesis) slow(ctx context.Context, window *FaultWindow) error {
	id, why := n.target()
	delay := time.Duration(50+n.random.IntN(251)) * time.Millisecond
	window.Nodes, window.Detail = []int{id}, fmt.Sprintf("delay every link of the %s by %v", why, delay)
	for other := 0; other <= len(n.cluster.nodes); other++ {
		if other != id {
			n.cluster.Links.Set(Link{Endpoint(id), Endpoint(other)}, LinkState{Delay: delay})
			n.cluster.Links.Set(Link{Endpoint(other), Endpoint(id)}, LinkState{Delay: delay})
		}
	}
	n.hold(ctx)
	n.cluster.Links.HealAll()
	return nil
}

func (n *nemesis) cutClients(ctx context.Context, window *FaultWindow) error {
	id, why := n.target()
	mode := Stall
	if n.random.IntN(2) == 0 {
		mode = Reset
	}
	window.Nodes, window.Detail = []int{id}, fmt.Sprintf("cut the clients off the %s (%s)", why, mode)
	n.cluster.Links.Cut(Client, Endpoint(id), mode)
	n.hold(ctx)
	n.cluster.Links.HealAll()
	return nil
}

func (n *nemesis) strand(ctx context.Context, window *FaultWindow) error {
	nodes := len(n.cluster.nodes)
	if nodes < strandNodesMin || !partitionsSupported {
		window.Detail = fmt.Sprintf("skipped: needs %d nodes and Linux", strandNodesMin)
		return nil
	}
	view, err := n.anyView()
	if err != nil {
		return err
	}
	var candidates []PartitionView
	for _, p := range view.Partitions {
		if p.Topic == n.topic && p.Leader > 0 && len(p.ISR) >= 2 && len(p.Replicas) < nodes-1 {
			candidates = append(candidates, p)
		}
	}
	if len(candidates) == 0 {
		window.Detail = "skipped: no partition led with a follower in sync"
		return nil
	}
	target := candidates[n.random.IntN(len(candidates))]
	leader := Endpoint(target.Leader)
	var followers, rest []Endpoint
	for id := Endpoint(1); id <= Endpoint(nodes); id++ {
		switch {
		case id == leader:
		case slices.Contains(target.Replicas, int32(id)):
			followers = append(followers, id)
		default:
			rest = append(rest, id)
		}
	}
	window.Nodes = []int{int(leader)}
	window.Detail = fmt.Sprintf("strand the leader of %s-%d: split off followers %v until it is the ISR alone, then isolate it", n.topic, target.Partition, followers)
	n.cluster.Links.Partition(Stall, followers, append([]Endpoint{leader}, rest...))
	alone := n.waitView(ctx, func(p PartitionView) bool { return p.Leader == int32(leader) && len(p.ISR) == 1 }, target)
	n.hold(ctx)
	n.cluster.Links.Partition(Stall, []Endpoint{leader}, append(slices.Clone(followers), rest...))
	moved := n.waitView(ctx, func(p PartitionView) bool { return p.Leader != int32(leader) }, target)
	window.Detail += fmt.Sprintf(" (ISR shrank to the leader alone: %t; the leadership moved: %t)", alone, moved)
	n.hold(ctx)
	n.cluster.Links.HealAll()
	return nil
}

// anyView is the metadata of the first running node that answers.
func (n *nemesis) anyView() (NodeView, error) {
	var last error
	for _, node := range n.cluster.nodes {
		if !node.Alive() || node.Paused() {
			continue
		}
		view, err := n.cluster.View(node.ID)
		if err == nil {
			return view, nil
		}
		last = err
	}
	return NodeView{}, fmt.Errorf("harness: no node answers Metadata: %v", last)
}

// waitView waits, at most strandStepTimeout, until the quorum leader's
// view of partition target satisfies done.
func (n *nemesis) waitView(ctx context.Context, done func(PartitionView) bool, target PartitionView) bool {
	deadline := time.Now().Add(strandStepTimeout)
	for time.Now().Before(deadline) && ctx.Err() == nil {
		if leader := n.cluster.QuorumLeader(); leader > 0 {
			if view, err := n.cluster.View(int(leader)); err == nil {
				for _, p := range view.Partitions {
					if p.Topic == target.Topic && p.Partition == target.Partition && done(p) {
						return true
					}
				}
			}
		}
		sleep(ctx, observerPollIntervalMax)
	}
	return false
}

func (n *nemesis) rolling(ctx context.Context, window *FaultWindow) error {
	window.Detail = "SIGTERM each node in turn, restart it, wait for full ISRs"
	var problems []string
	for _, node := range n.cluster.nodes {
		window.Nodes = append(window.Nodes, node.ID)
		if err := node.Stop(nodeStopTimeout); err != nil {
			problems = append(problems, err.Error())
		}
		if err := node.Start(); err != nil {
			return err
		}
		if err := n.cluster.WaitHealthy(ctx, rollingRejoinTimeout, n.topic); err != nil && ctx.Err() == nil {
			problems = append(problems, fmt.Sprintf("node %d did not rejoin: %v", node.ID, err))
		}
		if ctx.Err() != nil {
			break
		}
	}
	if len(problems) > 0 {
		return fmt.Errorf("%s", strings.Join(problems, "; "))
	}
	return nil
}

func (n *nemesis) fullKill(ctx context.Context, window *FaultWindow) error {
	window.Detail = "SIGKILL every node, restart them all"
	var wait sync.WaitGroup
	errs := make([]error, len(n.cluster.nodes))
	for i, node := range n.cluster.nodes {
		window.Nodes = append(window.Nodes, node.ID)
		wait.Add(1)
		go func() {
			defer wait.Done()
			errs[i] = node.Kill()
		}()
	}
	wait.Wait()
	sleep(ctx, n.timing.FullKillDowntime)
	for i, node := range n.cluster.nodes {
		if err := node.Start(); err != nil && errs[i] == nil {
			errs[i] = err
		}
	}
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// healEverything ends every fault: links pass, paused nodes continue,
// dead nodes start again.
func (c *Cluster) healEverything() error {
	c.Links.HealAll()
	var problems []string
	for _, node := range c.nodes {
		if err := node.Resume(); err != nil {
			problems = append(problems, err.Error())
		}
		if !node.Alive() {
			if err := node.Start(); err != nil {
				problems = append(problems, err.Error())
			}
		}
	}
	if len(problems) > 0 {
		return fmt.Errorf("harness: healing: %s", strings.Join(problems, "; "))
	}
	return nil
}

// sleep waits for d or until ctx ends, and reports whether d passed.
func sleep(ctx context.Context, d time.Duration) bool {
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-timer.C:
		return true
	}
}
