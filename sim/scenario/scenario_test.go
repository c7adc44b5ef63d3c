package scenario

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"sluice/core/batch"
)

// roundTripSeeds is how many drawn scenarios the round trip covers.
const roundTripSeeds = 400

func TestFormatThenParseGivesTheScenarioBack(t *testing.T) {
	for seed := uint64(1); seed <= roundTripSeeds; seed++ {
		s := Draw(seed)
		text := Format(s)
		back, err := Parse(text)
		if err != nil {
			t.Fatalf("seed %d: %v\n%s", seed, err, text)
		}
		if diff := cmp.Diff(s, back); diff != "" {
			t.Fatalf("seed %d: Parse(Format(s)) differs (-drawn +parsed):\n%s\n%s", seed, diff, text)
		}
	}
}

func TestEditedScenariosRoundTrip(t *testing.T) {
	s := Draw(3)
	s.Clients = Clients{}
	s.Rates = nil
	s.Schedule = []Event{
		{At: time.Second, Kind: KindPartition, Sides: [2][]int{{1, 2}, {3}}, For: 2 * time.Second},
		{At: 2 * time.Second, Kind: KindHeal},
		{At: 3 * time.Second, Kind: KindClockJump, Target: NodeTarget(2), By: -30 * time.Second},
		{At: 4 * time.Second, Kind: KindPowerLoss, For: time.Second, Stagger: 300 * time.Millisecond},
		{At: 5 * time.Second, Kind: KindSlowDisk, Target: Target{Role: RoleController}, For: time.Second, SyncMin: 10 * time.Millisecond, SyncMax: 90 * time.Millisecond},
		{At: 6 * time.Second, Kind: KindClockDrift, Target: LeaderTarget("orders", 1), Rate: 1.25, For: time.Second},
		{At: 7 * time.Second, Kind: KindReset, Target: Target{Role: RoleAny}},
		{At: 8 * time.Second, Kind: KindStrand, Target: LeaderTarget(OffsetsTopicName, int32(s.Cluster.OffsetsPartitions-1)), For: time.Second},
	}
	s.Canaries = []string{"replica-read-above-hw"}
	s.Profile = "replica-acks-before-sync"
	s.Expect = Expect{Fail: true, Check: "lost-write"}
	if err := s.Validate(); err != nil {
		t.Fatal(err)
	}
	back, err := Parse(Format(s))
	if err != nil {
		t.Fatalf("%v\n%s", err, Format(s))
	}
	if diff := cmp.Diff(s, back); diff != "" {
		t.Fatalf("(-edited +parsed):\n%s\n%s", diff, Format(s))
	}
	other := Scenario{Workload: "broker", Seed: 107, Canaries: []string{"replica-acks-before-sync"}, Expect: Expect{Fail: true}}
	back, err = Parse(Format(other))
	if err != nil || !cmp.Equal(other, back) {
		t.Fatalf("another workload's scenario: %v\n%s", err, cmp.Diff(other, back))
	}
}

func TestPartialFileKeepsTheRestOfItsSeed(t *testing.T) {
	text := `
# Leader isolation: the leader of orders-0 is cut off from everyone.
seed 11
nodes 3
topic orders partitions 3 replication 3 min-insync 2
producer p1 acks all idempotent
group g1 members 2
safety 12s
at 3s isolate leader orders-0
at 8s heal
expect pass
`
	s, err := Parse(text)
	if err != nil {
		t.Fatal(err)
	}
	drawn := Draw(11)
	if s.Cluster.Nodes != 3 || len(s.Topics) != 1 || s.Topics[0] != (Topic{Name: "orders", Partitions: 3, Replication: 3, MinInsync: 2}) {
		t.Fatalf("cluster %+v topics %+v", s.Cluster, s.Topics)
	}
	if len(s.Clients.Producers) != 1 || !cmp.Equal(s.Clients.Producers[0], Producer{Name: "p1", Topic: "orders", Acks: -1, Idempotent: true}) {
		t.Fatalf("producers %+v", s.Clients.Producers)
	}
	if !cmp.Equal(s.Clients.Readers, drawn.Clients.Readers) && len(s.Clients.Readers) != 1 {
		t.Fatalf("readers %+v, want the drawn ones", s.Clients.Readers)
	}
	if s.Clients.Groups[0] != (Group{Name: "g1", Topic: "orders", Members: 2}) {
		t.Fatalf("groups %+v", s.Clients.Groups)
	}
	if s.Timeouts != drawn.Timeouts || s.Disk != drawn.Disk || s.Network != drawn.Network {
		t.Fatal("the settings the file leaves out must be seed 11's")
	}
	want := []Event{
		{At: 3 * time.Second, Kind: KindIsolate, Target: LeaderTarget("orders", 0)},
		{At: 8 * time.Second, Kind: KindHeal},
	}
	if !cmp.Equal(s.Schedule, want) || s.Rates != nil {
		t.Fatalf("schedule %+v rates %+v: a file's at lines are the whole schedule", s.Schedule, s.Rates)
	}
	if s.Safety != 12*time.Second || s.Expect.Fail {
		t.Fatalf("safety %v expect %+v", s.Safety, s.Expect)
	}
}

func TestRatesWithoutEventsDrawTheSchedule(t *testing.T) {
	s, err := Parse("seed 5\nrate crash 1s\nrate pause 2s\nsafety 10s\n")
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Schedule) < drawFaultsMin {
		t.Fatalf("%d events drawn", len(s.Schedule))
	}
	for _, e := range s.Schedule {
		if e.Kind != KindCrash && e.Kind != KindPause {
			t.Fatalf("event %+v of a kind the file switched off", e)
		}
	}
	again, _ := Parse("seed 5\nrate crash 1s\nrate pause 2s\nsafety 10s\n")
	if !cmp.Equal(s, again) {
		t.Fatal("the same file parsed twice differs")
	}
}

func TestDrawHoldsTheDefaultScenarioFloors(t *testing.T) {
	for seed := uint64(1); seed <= roundTripSeeds; seed++ {
		s := Draw(seed)
		orders := s.Topics[0]
		groupMembers := 0
		for _, g := range s.Clients.Groups {
			groupMembers = max(groupMembers, g.Members)
		}
		switch {
		case s.Cluster.Nodes < 3:
			t.Fatalf("seed %d: %d nodes", seed, s.Cluster.Nodes)
		case orders.Partitions < 3 || orders.Replication < 3:
			t.Fatalf("seed %d: topic %+v", seed, orders)
		case len(s.Clients.Producers) < 2 || groupMembers < 2:
			t.Fatalf("seed %d: clients %+v", seed, s.Clients)
		case len(s.Schedule) < 3:
			t.Fatalf("seed %d: %d faults", seed, len(s.Schedule))
		case s.Safety < 9*time.Second:
			t.Fatalf("seed %d: safety %v", seed, s.Safety)
		case s.Operations != drawOperations:
			t.Fatalf("seed %d: the safety phase waits for %d operations, not the floor %d", seed, s.Operations, drawOperations)
		case expectedSends(s) < drawSendsMin:
			t.Fatalf("seed %d: %d lanes thinking up to %v in %v: %d sends expected, fewer than %d", seed, s.Lanes(), s.Timeouts.Think, s.Safety, expectedSends(s), drawSendsMin)
		}
	}
}

func TestSwarmLeavesKindsOut(t *testing.T) {
	off := map[Kind]int{}
	for seed := uint64(1); seed <= 100; seed++ {
		s := Draw(seed)
		for _, kind := range DrawnKinds() {
			if s.Rate(kind) == 0 {
				off[kind]++
			}
		}
	}
	for _, kind := range DrawnKinds() {
		if off[kind] == 0 || off[kind] == 100 {
			t.Errorf("%s is off in %d of 100 seeds; the swarm must switch each kind on in some and off in others", kind, off[kind])
		}
	}
}

// TestSwarmSnapshotsTheMetadataInSomeRuns: the broker's default snapshot
// interval is never reached in a run of seconds, so only a drawn one
// makes a run take metadata snapshots and catch a node up from one.
func TestSwarmSnapshotsTheMetadataInSomeRuns(t *testing.T) {
	drawn := 0
	for seed := uint64(1); seed <= 100; seed++ {
		every := Draw(seed).Cluster.MetadataSnapshotEvery
		if every == 0 {
			continue
		}
		drawn++
		if every < drawMetadataSnapshotEveryMin || every > drawMetadataSnapshotEveryMax {
			t.Fatalf("seed %d: a metadata snapshot every %d records, outside %d to %d", seed, every, drawMetadataSnapshotEveryMin, drawMetadataSnapshotEveryMax)
		}
	}
	if drawn < 25 || drawn > 75 {
		t.Fatalf("%d of 100 seeds snapshot their metadata; want about half", drawn)
	}
}

func TestSwarmDeletesByRetentionInSomeRuns(t *testing.T) {
	drawn := 0
	for seed := uint64(1); seed <= 400; seed++ {
		l := Draw(seed).Logs
		if l.RetentionBytes == 0 {
			continue
		}
		drawn++
		if l.SegmentBytes == 0 || l.RetentionCheck == 0 {
			t.Fatalf("seed %d: retention-bytes %d without segment-bytes (%d) and retention-check (%v)", seed, l.RetentionBytes, l.SegmentBytes, l.RetentionCheck)
		}
		if segments := l.RetentionBytes / l.SegmentBytes; l.RetentionBytes%l.SegmentBytes != 0 ||
			segments < drawRetentionSegmentsMin || segments > drawRetentionSegmentsMax {
			t.Fatalf("seed %d: retention-bytes %d is not %d to %d segments of %d bytes", seed, l.RetentionBytes, drawRetentionSegmentsMin, drawRetentionSegmentsMax, l.SegmentBytes)
		}
		back, err := Parse(Format(Draw(seed)))
		if err != nil || back.Logs != l {
			t.Fatalf("seed %d: logs %+v came back as %+v (%v)", seed, l, back.Logs, err)
		}
	}
	// 0.5 roll segments, 0.6 of those check retention, 0.25 of those
	// delete by size: about 7.5%, 30 of 400.
	if drawn < 10 || drawn > 60 {
		t.Fatalf("%d of 400 seeds delete by retention; want about 30", drawn)
	}
}

func TestSwarmGrowsATopicInSomeRuns(t *testing.T) {
	drawn := 0
	for seed := uint64(1); seed <= 400; seed++ {
		s := Draw(seed)
		growing := 0
		for _, topic := range s.Topics {
			if topic.GrowTo == 0 {
				continue
			}
			growing++
			added := topic.GrowTo - topic.Partitions
			if added < drawGrowMin || added > drawGrowMax ||
				topic.GrowAt < time.Duration(drawGrowFromMin*float64(s.Safety))-time.Millisecond ||
				topic.GrowAt > time.Duration(drawGrowFromMax*float64(s.Safety))+time.Millisecond {
				t.Fatalf("seed %d: %s grows from %d to %d at %v of %v", seed, topic.Name, topic.Partitions, topic.GrowTo, topic.GrowAt, s.Safety)
			}
		}
		if growing > 1 {
			t.Fatalf("seed %d grows %d topics, want at most one", seed, growing)
		}
		drawn += growing
	}
	if drawn < 80 || drawn > 160 {
		t.Fatalf("%d of 400 seeds grow a topic; want about 120", drawn)
	}
}

func TestSwarmDeletesConsumedRecordsInSomeRuns(t *testing.T) {
	drawn := 0
	for seed := uint64(1); seed <= 400; seed++ {
		s := Draw(seed)
		for _, topic := range s.Topics {
			if topic.DeleteEvery == 0 {
				continue
			}
			drawn++
			if topic.Name != s.Clients.Groups[0].Topic || topic.DeleteEvery < drawDeleteEveryMin || topic.DeleteEvery > drawDeleteEveryMax {
				t.Fatalf("seed %d: %s deletes every %v; want the group's topic, every %v to %v", seed, topic.Name, topic.DeleteEvery, drawDeleteEveryMin, drawDeleteEveryMax)
			}
		}
	}
	if drawn < 60 || drawn > 140 {
		t.Fatalf("%d of 400 seeds delete records; want about 100", drawn)
	}
}

func TestSwarmAltersATopicsConfigsInSomeRuns(t *testing.T) {
	drawn := 0
	for seed := uint64(1); seed <= 400; seed++ {
		s := Draw(seed)
		for _, topic := range s.Topics {
			if topic.AlterEvery == 0 {
				continue
			}
			drawn++
			if !s.Clients.Uses(topic.Name) || topic.Recreated() || topic.AlterEvery < drawAlterEveryMin || topic.AlterEvery > drawAlterEveryMax {
				t.Fatalf("seed %d: %s has its configs altered every %v; want a topic the clients use, every %v to %v", seed, topic.Name, topic.AlterEvery, drawAlterEveryMin, drawAlterEveryMax)
			}
		}
	}
	if drawn < 60 || drawn > 140 {
		t.Fatalf("%d of 400 seeds alter a topic's configs; want about 100", drawn)
	}
}

// A quarter of the runs rebalance leaders, every 1 to 4 s; a file's nodes
// line says whether its cluster does, whatever its seed drew.
func TestSwarmRebalancesLeadersInSomeRuns(t *testing.T) {
	drawn := 0
	for seed := uint64(1); seed <= 400; seed++ {
		every := Draw(seed).Cluster.LeaderRebalanceEvery
		if every == 0 {
			continue
		}
		drawn++
		if every < time.Second || every > 4*time.Second || every%time.Second != 0 {
			t.Fatalf("seed %d rebalances every %v", seed, every)
		}
		s, err := Parse(fmt.Sprintf("seed %d\nnodes 3", seed))
		if err != nil || s.Cluster.LeaderRebalanceEvery != 0 {
			t.Fatalf("seed %d with a nodes line of its own: %v, rebalancing every %v", seed, err, s.Cluster.LeaderRebalanceEvery)
		}
	}
	if drawn < 60 || drawn > 140 {
		t.Fatalf("%d of 400 seeds rebalance leaders; want about 100", drawn)
	}
}

func TestSwarmElectsLeadersInSomeRuns(t *testing.T) {
	drawn := 0
	for seed := uint64(1); seed <= 400; seed++ {
		s := Draw(seed)
		for _, topic := range s.Topics {
			if topic.ElectEvery == 0 {
				continue
			}
			drawn++
			if !s.Clients.Uses(topic.Name) || topic.Recreated() || topic.ElectEvery < drawElectEveryMin || topic.ElectEvery > drawElectEveryMax {
				t.Fatalf("seed %d: %s has leaders elected every %v; want a topic the clients use, every %v to %v", seed, topic.Name, topic.ElectEvery, drawElectEveryMin, drawElectEveryMax)
			}
		}
	}
	if drawn < 45 || drawn > 120 {
		t.Fatalf("%d of 400 seeds run leader elections; want about 80", drawn)
	}
}

func TestSwarmReassignsPartitionsInSomeRuns(t *testing.T) {
	drawn := 0
	for seed := uint64(1); seed <= 400; seed++ {
		s := Draw(seed)
		for _, topic := range s.Topics {
			if topic.ReassignEvery == 0 {
				continue
			}
			drawn++
			if !s.Clients.Uses(topic.Name) || topic.Recreated() || topic.ReassignEvery < drawReassignEveryMin || topic.ReassignEvery > drawReassignEveryMax {
				t.Fatalf("seed %d: %s is reassigned every %v; want a topic the clients use, every %v to %v", seed, topic.Name, topic.ReassignEvery, drawReassignEveryMin, drawReassignEveryMax)
			}
		}
	}
	if drawn < 45 || drawn > 120 {
		t.Fatalf("%d of 400 seeds reassign partitions; want about 80", drawn)
	}
}

// The draws of TestSwarm*InSomeRuns and Static come back from their text
// in TestFormatThenParseGivesTheScenarioBack, over the same 400 seeds.
func TestSwarmMakesSomeGroupsStatic(t *testing.T) {
	static := 0
	for seed := uint64(1); seed <= roundTripSeeds; seed++ {
		if Draw(seed).Clients.Groups[0].Static {
			static++
		}
	}
	if static < 80 || static > 160 {
		t.Fatalf("%d of 400 seeds have a static group; want about 120", static)
	}
}

func TestSwarmGivesSomeGroupsEachBalancer(t *testing.T) {
	drawn := map[Balancer]int{}
	for seed := uint64(1); seed <= roundTripSeeds; seed++ {
		drawn[Draw(seed).Clients.Groups[0].Balancer]++
	}
	// 30% cooperative, 15% half upgraded, the rest eager.
	if c, u := drawn[BalancerCooperative], drawn[BalancerUpgrade]; c < 80 || c > 160 || u < 30 || u > 90 {
		t.Fatalf("of 400 seeds' groups %d are cooperative and %d upgrading; want about 120 and 60", c, u)
	}
}

func TestSwarmBatchesAndCompressesSomeProducers(t *testing.T) {
	producers, batching := 0, 0
	codecs := map[int]int{}
	for seed := uint64(1); seed <= roundTripSeeds; seed++ {
		for _, p := range Draw(seed).Clients.Producers {
			producers++
			if p.BatchMax > 1 {
				batching++
				if p.BatchMax > drawBatchMax {
					t.Fatalf("seed %d: a batch of up to %d records", seed, p.BatchMax)
				}
			}
			codecs[p.Compression]++
		}
	}
	// Half batch; 30% compress, spread over Kafka's four codecs.
	if batching < producers*2/5 || batching > producers*3/5 {
		t.Fatalf("%d of %d producers batch; want about half", batching, producers)
	}
	for codec := batch.CompressionGzip; codec <= batch.CompressionZstd; codec++ {
		if codecs[codec] < producers/25 || codecs[codec] > producers/7 {
			t.Fatalf("%d of %d producers use %s; want about 7.5%%", codecs[codec], producers, batch.CodecName(codec))
		}
	}
}

func TestSwarmKeepsSeveralSendsInFlightForSomeIdempotentProducers(t *testing.T) {
	idempotent, pipelined := 0, 0
	for seed := uint64(1); seed <= roundTripSeeds; seed++ {
		for _, p := range Draw(seed).Clients.Producers {
			if p.InFlight > 1 && (!p.Idempotent || p.InFlight > inFlightMax) {
				t.Fatalf("seed %d: producer %+v keeps %d in flight", seed, p, p.InFlight)
			}
			if p.Idempotent {
				idempotent++
				if p.InFlight > 1 {
					pipelined++
				}
			}
		}
	}
	if pipelined < idempotent*2/5 || pipelined > idempotent*3/5 {
		t.Fatalf("%d of %d idempotent producers keep several sends in flight; want about half", pipelined, idempotent)
	}
}

// "batch 1" is a record per batch, the same scenario as no batch
// setting, so the file reads back the same after Format.
func TestBatchOfOneIsNoBatching(t *testing.T) {
	s, err := Parse("producer p1 topic orders batch 1 compression none")
	if err != nil {
		t.Fatal(err)
	}
	if p := s.Clients.Producers[0]; p.BatchMax != 0 || p.Compression != batch.CompressionNone {
		t.Fatalf("batch 1, compression none parsed as %+v", p)
	}
	again, err := Parse(Format(s))
	if err != nil || !cmp.Equal(again, s) {
		t.Fatalf("round trip: %v %s", err, cmp.Diff(s, again))
	}
}

func TestParseRefusesBadInput(t *testing.T) {
	cases := map[string]string{
		"nodes 0": "nodes",
		"nodes 3\ntopic orders partitions 3 replication 4": "replication 4",
		"bogus 1":                               "unknown directive",
		"group g1 topic orders balancer sticky": "balancer \"sticky\"",
		"at 1s crash n9 for 1s":                 "no node n9",
		"offsets-partitions 2\nat 1s crash leader __consumer_offsets-2 for 1s": "no partition __consumer_offsets-2 among 2",
		"at 1s explode n1":             "unknown fault",
		"at 1s pause n1":               "needs a window",
		"at 1s slow-net n1 for 1s":     "give latency A-B",
		"expect pass\nexpect fail":     "given twice (first at line 1)",
		"safety 5s\nsafety 6s":         "given twice",
		"at 1s slow-disk n1 for 1s":    "give sync A-B",
		"at 2s heal\nat 1s heal":       "time order",
		"producer p1 topic nowhere":    "does not create",
		"producer n1":                  "taken",
		"rate explode 1s":              "swarm draws",
		"timeouts election 0s":         "election",
		"disk torn-write 2":            "chance",
		"expect maybe":                 "expect pass",
		"workload broker\nnodes 3":     "only",
		"at 1s partition n1 n2 for 1s": "two sides",
		"seed x":                       "seed",
		"operations -1":                "operations -1",
		"operations many":              "operations",
		"metadata-snapshot-every 1":    "metadata-snapshot-every 1",
		"metadata-snapshot-every -5":   "metadata-snapshot-every -5",
		"logs retention-bytes 1":       "retention-bytes 1",
		"logs retention-bytes lots":    "retention-bytes",
		"safety 10s\ntopic orders partitions 3 grow-to 3 grow-at 1s":                 "grows from 3 to 3",
		"safety 10s\ntopic orders partitions 3 grow-to 17 grow-at 1s":                "at most 16",
		"safety 10s\ntopic orders partitions 3 grow-to 5 grow-at 10s":                "within the safety phase",
		"topic orders partitions 3 grow-at 1s":                                       "grow-at without grow-to",
		"topic orders partitions 3 grow-to 5 grow-at soon":                           "grow-at",
		"safety 10s\ntopic orders partitions 3 alter-every 50ms":                     "configs altered every 50ms",
		"safety 10s\ntopic orders partitions 3 alter-every 11s":                      "configs altered every 11s",
		"safety 10s\ntopic scratch partitions 1 recreate-every 1s alter-every 1s":    "has its configs altered",
		"safety 10s\ntopic scratch partitions 1 recreate-every 1s elect-every 1s":    "has leaders elected nor",
		"safety 10s\ntopic orders partitions 3 elect-every 50ms":                     "leaders elected every 50ms",
		"safety 10s\ntopic orders partitions 3 reassign-every 50ms":                  "reassigned every 50ms",
		"safety 10s\ntopic scratch partitions 1 recreate-every 1s reassign-every 1s": "nor is reassigned",
		"nodes 3 leader-rebalance-every 100ms":                                       "leader-rebalance-every 100ms",
		"nodes 3 leader-rebalance-every soon":                                        "leader-rebalance-every",
		"producer p1 batch 0":                                                        "batch \"0\"",
		"producer p1 batch 65":                                                       "from 1 to 64",
		"producer p1 compression brotli":                                             "compression \"brotli\"",
		"producer p1 idempotent in-flight 6":                                         "from 1 to 5",
		"producer p1 in-flight 3":                                                    "needs idempotent",
	}
	for text, want := range cases {
		if _, err := Parse(text); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Parse(%q) = %v, want an error mentioning %q", text, err, want)
		}
	}
}

func TestOptionsNameEveryPart(t *testing.T) {
	s := Draw(9)
	names := map[string]bool{}
	for _, o := range s.Options() {
		if names[o.Name] {
			t.Fatalf("option %s twice", o.Name)
		}
		names[o.Name] = true
		if o.Value == "" {
			t.Fatalf("option %s is empty", o.Name)
		}
	}
	for _, want := range []string{"nodes", "topics", "producers", "groups", "rates", "schedule", "buggify"} {
		if !names[want] {
			t.Fatalf("no option %s", want)
		}
	}
}

// sweepSeeds is how many drawn scenarios the swarm's fault mix is checked
// over: enough that every kind comes up in many.
const sweepSeeds = 3000

func TestSwarmDrawsEveryKind(t *testing.T) {
	if diff := cmp.Diff(Kinds(), DrawnKinds()); diff != "" {
		t.Fatalf("kinds the swarm never draws (-every kind +drawn):\n%s", diff)
	}
	if last := kindDraws[len(kindDraws)-1].kind; last != KindHeal {
		t.Fatalf("the last of kindDraws is %s; Draw's fallback leaves out the last, which must be the heal", last)
	}
	events := map[Kind]int{}
	for seed := uint64(1); seed <= sweepSeeds; seed++ {
		for _, e := range Draw(seed).Schedule {
			events[e.Kind]++
		}
	}
	for _, kind := range Kinds() {
		if events[kind] == 0 {
			t.Errorf("no event of %s in %d seeds", kind, sweepSeeds)
		}
	}
}

// TestDrawnPartitionsSplitTheNodesEveryWay checks the sides the swarm
// draws: two non-empty sides of distinct nodes of the cluster, each
// ascending, written in the schedule so a replay cuts the same links; and,
// over the seeds, splits no kind aimed at one node makes (both sides of
// two nodes or more, not in id order) and splits leaving nodes out.
func TestDrawnPartitionsSplitTheNodesEveryWay(t *testing.T) {
	interleaved, leftOut := 0, 0
	for seed := uint64(1); seed <= sweepSeeds; seed++ {
		s := Draw(seed)
		for _, e := range s.Schedule {
			if e.Kind != KindPartition {
				continue
			}
			if err := s.validateSides(e.Sides); err != nil {
				t.Fatalf("seed %d: %v: %+v", seed, err, e)
			}
			for _, side := range e.Sides {
				if !slices.IsSorted(side) {
					t.Fatalf("seed %d: side %v is not ascending", seed, side)
				}
			}
			if e.For < s.Faults.WindowMin || e.For > s.Faults.WindowMax {
				t.Fatalf("seed %d: a partition for %v, outside the window %v-%v", seed, e.For, s.Faults.WindowMin, s.Faults.WindowMax)
			}
			written := "partition " + formatNodes(e.Sides[0]) + " | " + formatNodes(e.Sides[1])
			if !strings.Contains(Format(s), written) {
				t.Fatalf("seed %d: the file does not say %q", seed, written)
			}
			left, right := e.Sides[0], e.Sides[1]
			if len(left) >= 2 && len(right) >= 2 && (left[len(left)-1] > right[0] && right[len(right)-1] > left[0]) {
				interleaved++
			}
			if len(left)+len(right) < s.Cluster.Nodes {
				leftOut++
			}
		}
	}
	if interleaved == 0 || leftOut == 0 {
		t.Fatalf("in %d seeds: %d partitions with interleaved sides of two nodes or more, %d leaving nodes out; want some of each", sweepSeeds, interleaved, leftOut)
	}
}

// TestDrawnHealsHaveSomethingToEnd checks that the swarm draws a heal
// only beside a network fault, and that heals do not count toward the
// floor of faults.
func TestDrawnHealsHaveSomethingToEnd(t *testing.T) {
	heals := 0
	for seed := uint64(1); seed <= sweepSeeds; seed++ {
		s := Draw(seed)
		if s.Rate(KindHeal) == 0 {
			continue
		}
		heals++
		if !hasNetworkRate(s.Rates) {
			t.Fatalf("seed %d draws heals and no network fault: rates %+v", seed, s.Rates)
		}
		if faults(s.Schedule) < drawFaultsMin {
			t.Fatalf("seed %d: %d faults besides its heals, want at least %d", seed, faults(s.Schedule), drawFaultsMin)
		}
	}
	if heals == 0 {
		t.Fatalf("no heal rate in %d seeds", sweepSeeds)
	}
	s, err := Parse("seed 5\nrate heal 1s\nsafety 10s\n")
	if err != nil {
		t.Fatal(err)
	}
	if faults(s.Schedule) < drawFaultsMin {
		t.Fatalf("a file whose only rate is a heal draws %+v; want the floor of faults made up", s.Schedule)
	}
}

func TestValidateRefusesAPartitionRateWithOneNode(t *testing.T) {
	s := Draw(3)
	s.Cluster.Nodes = 1
	s.ClockRates = s.ClockRates[:1]
	s.Rates = []Rate{{Kind: KindPartition, Mean: time.Second}}
	if err := s.validateFaults(); err == nil || !strings.Contains(err.Error(), "two sides") {
		t.Fatalf("validateFaults = %v, want an error about the two sides", err)
	}
}

func TestACoordinatorTargetNeedsAGroup(t *testing.T) {
	s := Draw(3)
	s.Rates = nil
	s.Schedule = []Event{{At: time.Second, Kind: KindStrand, Target: Target{Role: RoleCoordinator}, For: 2 * time.Second}}
	if len(s.Clients.Groups) == 0 {
		t.Fatal("seed 3 draws no group")
	}
	if err := s.Validate(); err != nil {
		t.Fatal(err)
	}
	text := Format(s)
	if !strings.Contains(text, "strand coordinator for 2s") {
		t.Fatalf("the event is not written as a coordinator target:\n%s", text)
	}
	back, err := Parse(text)
	if err != nil || !cmp.Equal(s, back) {
		t.Fatalf("round trip: %v\n%s", err, cmp.Diff(s, back))
	}
	s.Clients.Groups = nil
	if err := s.Validate(); err == nil || !strings.Contains(err.Error(), "no group to find the coordinator of") {
		t.Fatalf("Validate without a group = %v", err)
	}
}

// An idle slot (a fault the shrinker dropped) reads and writes as "at T
// idle", may lie past the safety phase, which a fault may not, and takes
// nothing else; the swarm never draws one, and a rate cannot ask for one.
func TestIdleSlotsRoundTripAndMayOutlastTheSafetyPhase(t *testing.T) {
	s := Draw(3)
	s.Rates = nil
	s.Schedule = []Event{{At: time.Second, Kind: KindIdle}, {At: s.Safety + time.Second, Kind: KindIdle}}
	if err := s.Validate(); err != nil {
		t.Fatal(err)
	}
	text := Format(s)
	if !strings.Contains(text, "at 1s idle\n") {
		t.Fatalf("the slot is not written as an idle line:\n%s", text)
	}
	back, err := Parse(text)
	if err != nil || !cmp.Equal(s, back) {
		t.Fatalf("round trip: %v\n%s", err, cmp.Diff(s, back))
	}
	s.Schedule[1].Kind = KindCrash
	if err := s.Validate(); err == nil || !strings.Contains(err.Error(), "safety phase") {
		t.Fatalf("a crash past the safety phase: Validate = %v", err)
	}
	for _, bad := range []string{"at 1s idle for 2s", "at 1s idle n1"} {
		if _, err := Parse("seed 3\n" + bad + "\n"); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
	if _, err := Parse("seed 3\nrate idle 1s\n"); err == nil {
		t.Error("a rate of idle slots parsed")
	}
	if slices.Contains(DrawnKinds(), KindIdle) {
		t.Error("the swarm draws idle slots")
	}
}
