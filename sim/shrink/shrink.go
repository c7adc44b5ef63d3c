package shrink

import (
	"time"

	"sluice/sim"
	"sluice/sim/scenario"
)

// runsMaxDefault bounds the runs one shrink may take: a run takes a tenth
// of a second or so, so the default shrink ends within about a minute.
const runsMaxDefault = 400

// Options configure a shrink.
type Options struct {
	// Run runs a candidate scenario; the cluster workload's RunScenario
	// with the failing run's options (canaries on).
	Run func(scenario.Scenario) sim.Result
	// RunsMax bounds the candidate runs; runsMaxDefault when zero.
	RunsMax int
	// Progress, when set, is told of each accepted step.
	Progress func(step string, s scenario.Scenario)
}

// Outcome is what a shrink found.
type Outcome struct {
	// Scenario is the smallest scenario found that fails Check.
	Scenario scenario.Scenario
	Check    string
	// Result is Scenario's failing run.
	Result sim.Result
	// Runs is how many candidate runs it took; Steps lists the accepted
	// steps in order.
	Runs  int
	Steps []string
}

// Shrink reduces s, whose run fails check, while its run keeps failing
// check. It returns s itself when no step helps.
func Shrink(s scenario.Scenario, check string, original sim.Result, options Options) Outcome {
	runsMax := options.RunsMax
	if runsMax <= 0 {
		runsMax = runsMaxDefault
	}
	out := Outcome{Scenario: s, Check: check, Result: original}
	// try runs a candidate and keeps it if it still fails the check and
	// is smaller.
	try := func(step string, candidate scenario.Scenario) bool {
		if out.Runs >= runsMax || candidate.Validate() != nil || Size(candidate) >= Size(out.Scenario) {
			return false
		}
		out.Runs++
		r := options.Run(candidate)
		if r.Check != check {
			return false
		}
		out.Scenario, out.Result = candidate, r
		out.Steps = append(out.Steps, step)
		if options.Progress != nil {
			options.Progress(step, candidate)
		}
		return true
	}
	for progressed := true; progressed && out.Runs < runsMax; {
		progressed = false
		for _, step := range steps {
			for _, c := range step.candidates(out.Scenario) {
				if try(c.name, c.scenario) {
					progressed = true
					break // the next candidates were built from the old scenario
				}
			}
		}
	}
	return out
}

// Size measures a scenario for shrinking: schedule slots plus fault events
// (a fault counts two, an idle slot one, so that dropping a fault and then
// its slot both count), nodes, clients, partitions, whole seconds of safety phase, an
// operations floor (1 when the safety phase waits for one) and each
// producer setting beyond a plain send (batching, compression, linger,
// sends in flight),
// summed. Every
// accepted step lowers it, so a shrink ends.
func Size(s scenario.Scenario) int {
	size := len(s.Schedule) + FaultEvents(s) + s.Cluster.Nodes + len(s.ClientNames()) + int(s.Safety/time.Second) + len(s.Rates)
	if s.Operations > 0 {
		size++
	}
	if s.Cluster.MetadataSnapshotEvery > 0 {
		size++
	}
	if s.Cluster.LeaderRebalanceEvery > 0 {
		size++
	}
	for _, set := range []bool{s.Logs.SegmentBytes != 0, s.Logs.OffsetsSegmentBytes != 0, s.Logs.RetentionCheck != 0} {
		if set {
			size++
		}
	}
	for _, t := range s.Topics {
		size += t.Partitions + t.Replication
		if t.GrowTo != 0 {
			size++
		}
		if t.DeleteEvery != 0 {
			size++
		}
		if t.RecreateEvery != 0 {
			size++
		}
		if t.AlterEvery != 0 {
			size++
		}
		if t.ElectEvery != 0 {
			size++
		}
		if t.ReassignEvery != 0 {
			size++
		}
	}
	for _, p := range s.Clients.Producers {
		for _, set := range []bool{p.BatchMax > 1, p.Compression != 0, p.Linger != 0, p.InFlight > 1} {
			if set {
				size++
			}
		}
	}
	return size
}
