package scenario

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"sluice/core/batch"
)

// Parse reads a scenario file: one directive a line, "#" starting a
// comment. A file names a seed (`seed 7`; seed 1 when it does not) and the
// parts of the scenario it fixes; everything else is what Draw gives that
// seed. The rules, section by section:
//
//   - Lists are replaced whole: the first `topic`, `producer`, `reader`,
//     `group`, `rate` or `at` line replaces the drawn list of its kind
//     (`no producers`, `no readers`, `no groups`, `no rates` and
//     `no faults` make one empty). Drawn clients of a topic the file
//     does not create move to its first topic.
//   - Settings are replaced one by one: a `timeouts` line changes the
//     timeouts it names, a `disk` line the disk settings it names.
//   - The schedule: `at` lines are the whole schedule (and a file that
//     gives them without `rate` lines has no rates). Without them the
//     schedule is drawn from the rates, after everything else is settled.
//
// Every directive, with the defaults of the optional parts:
//
//	workload cluster                     (another workload: only seed,
//	                                      canary and expect apply)
//	seed 7
//	nodes 3 [leader-rebalance-every 2s]  (without it: no automatic leader rebalancing)
//	offsets-partitions 1
//	metadata-snapshot-every 40           (0, the default: the broker's own)
//	clocks 1 1.01 0.99                   (every node's clock rate)
//	topic orders partitions 3 [replication 3] [min-insync 2] [page-cache] [unclean] [grow-to 5 grow-at 4s] [delete-every 1.5s] [recreate-every 2s] [alter-every 1s] [elect-every 1s] [reassign-every 1s]
//	producer p1 [topic orders] [acks all|1] [idempotent] [partitions 0,2] [linger 20ms]
//	reader r1 [topic orders] [partitions 0,2]
//	group g1 [topic orders] [members 2] [offset-readers 0] [balancer cooperative|upgrade] [static]
//	timeouts election 150ms quorum-fetch 450ms ...   (see Timeouts)
//	network latency 100us-2ms
//	disk sync 1ms-3ms torn-write 0.5 read-corruption 0 sync-failure 0
//	logs segment-bytes 4096 offsets-segment-bytes 1024 retention-check 500ms retention-bytes 16384   (0: the broker's default)
//	buggify enable 0.25 fire 0.25
//	profile replica-acks-before-sync     (the swarm profile the draw leaned toward; informational)
//	safety 12s
//	operations 200                       (the fewest client operations the safety phase waits for)
//	liveness 40s
//	faults window 200ms-2s leader-bias 0.5
//	rate crash 3s
//	at 3s isolate leader orders-0 for 5s  (see FormatEvent)
//	at 4s strand leader __consumer_offsets-1 for 3s  (any offsets partition's leader)
//	at 5s strand coordinator for 3s      (the first group's coordinator)
//	canary replica-hw-without-isr
//	expect pass | expect fail [CHECK]
func Parse(text string) (Scenario, error) {
	directives, err := splitDirectives(text)
	if err != nil {
		return Scenario{}, err
	}
	if err := checkSingleDirectives(directives); err != nil {
		return Scenario{}, err
	}
	workload, seed := WorkloadCluster, uint64(1)
	for _, d := range directives {
		switch d.words[0] {
		case "workload":
			if err := d.want(2); err != nil {
				return Scenario{}, err
			}
			workload = d.words[1]
		case "seed":
			if err := d.want(2); err != nil {
				return Scenario{}, err
			}
			if seed, err = strconv.ParseUint(d.words[1], 10, 64); err != nil {
				return Scenario{}, d.errorf("seed %q: %v", d.words[1], err)
			}
		}
	}
	var s Scenario
	if workload == WorkloadCluster {
		s = Draw(seed)
	} else {
		s = Scenario{Workload: workload, Seed: seed}
	}
	o := &overlay{s: &s}
	for _, d := range directives {
		if err := o.apply(d); err != nil {
			return Scenario{}, err
		}
	}
	if workload == WorkloadCluster {
		o.finish()
	}
	if err := s.Validate(); err != nil {
		return Scenario{}, err
	}
	return s, nil
}

// directive is one line of a file, split into words.
type directive struct {
	line  int
	words []string
}

func (d directive) errorf(format string, args ...any) error {
	return fmt.Errorf("scenario line %d (%s): %s", d.line, d.words[0], fmt.Sprintf(format, args...))
}

// want requires exactly n words.
func (d directive) want(n int) error {
	if len(d.words) != n {
		return d.errorf("want %d words, have %d", n, len(d.words))
	}
	return nil
}

// singleDirectives may appear once in a file: each sets one value, and
// a second line would silently replace the first (a file edited by hand
// that says "expect pass" above and "expect fail" below means one of
// them). seed is not among them: --seed replaces a file's seed with a
// line of its own after the file's.
var singleDirectives = []string{"workload", "nodes", "offsets-partitions", "metadata-snapshot-every", "clocks",
	"profile", "safety", "operations", "liveness", "expect"}

// checkSingleDirectives refuses a single-valued directive given twice.
func checkSingleDirectives(directives []directive) error {
	first := map[string]int{}
	for _, d := range directives {
		if !slices.Contains(singleDirectives, d.words[0]) {
			continue
		}
		if line, seen := first[d.words[0]]; seen {
			return d.errorf("given twice (first at line %d)", line)
		}
		first[d.words[0]] = d.line
	}
	return nil
}

// directivesMax bounds the lines a file may hold.
const directivesMax = 2000

func splitDirectives(text string) ([]directive, error) {
	var directives []directive
	for i, line := range strings.Split(text, "\n") {
		if hash := strings.IndexByte(line, '#'); hash >= 0 {
			line = line[:hash]
		}
		words := strings.Fields(line)
		if len(words) == 0 {
			continue
		}
		if len(directives) >= directivesMax {
			return nil, fmt.Errorf("scenario: more than %d directives", directivesMax)
		}
		directives = append(directives, directive{line: i + 1, words: words})
	}
	return directives, nil
}

// overlay applies a file's directives to the drawn scenario, remembering
// which lists the file replaced.
type overlay struct {
	s *Scenario

	nodes, clocks, topics, producers, readers, groups, rates, schedule, canaries bool
}

// commonDirectives are the ones every workload takes.
var commonDirectives = []string{"workload", "seed", "canary", "expect"}

func (o *overlay) apply(d directive) error {
	s := o.s
	if s.Workload != WorkloadCluster && !slices.Contains(commonDirectives, d.words[0]) {
		return d.errorf("the %s workload replays a seed; only %s apply", s.Workload, strings.Join(commonDirectives, ", "))
	}
	switch d.words[0] {
	case "workload", "seed":
		return nil
	case "nodes":
		o.nodes = true
		s.Cluster.LeaderRebalanceEvery = 0
		if len(d.words) == 4 && d.words[2] == "leader-rebalance-every" {
			if err := durationInto(&s.Cluster.LeaderRebalanceEvery)(d.words[3]); err != nil {
				return d.errorf("leader-rebalance-every %q: %v", d.words[3], err)
			}
			d.words = d.words[:2]
		}
		return parseIntInto(d, &s.Cluster.Nodes)
	case "offsets-partitions":
		return parseIntInto(d, &s.Cluster.OffsetsPartitions)
	case "metadata-snapshot-every":
		return parseIntInto(d, &s.Cluster.MetadataSnapshotEvery)
	case "clocks":
		o.clocks = true
		s.ClockRates = nil
		for _, word := range d.words[1:] {
			rate, err := strconv.ParseFloat(word, 64)
			if err != nil {
				return d.errorf("clock rate %q: %v", word, err)
			}
			s.ClockRates = append(s.ClockRates, rate)
		}
		return nil
	case "topic":
		return o.topic(d)
	case "producer":
		return o.producer(d)
	case "reader":
		return o.reader(d)
	case "group":
		return o.group(d)
	case "no":
		return o.none(d)
	case "timeouts":
		return o.timeouts(d)
	case "network":
		return parsePairs(d, map[string]func(string) error{
			"latency": func(v string) error { return parseRange(v, &s.Network.LatencyMin, &s.Network.LatencyMax) },
		})
	case "disk":
		return parsePairs(d, map[string]func(string) error{
			"sync":            func(v string) error { return parseRange(v, &s.Disk.SyncLatencyMin, &s.Disk.SyncLatencyMax) },
			"torn-write":      floatInto(&s.Disk.TornWrite),
			"read-corruption": floatInto(&s.Disk.ReadCorruption),
			"sync-failure":    floatInto(&s.Disk.SyncFailure),
		})
	case "logs":
		return parsePairs(d, map[string]func(string) error{
			"segment-bytes":         intInto(&s.Logs.SegmentBytes),
			"offsets-segment-bytes": intInto(&s.Logs.OffsetsSegmentBytes),
			"retention-check":       durationInto(&s.Logs.RetentionCheck),
			"retention-bytes":       intInto(&s.Logs.RetentionBytes),
		})
	case "buggify":
		return parsePairs(d, map[string]func(string) error{
			"enable": floatInto(&s.Buggify.Enable),
			"fire":   floatInto(&s.Buggify.Fire),
		})
	case "faults":
		return parsePairs(d, map[string]func(string) error{
			"window":      func(v string) error { return parseRange(v, &s.Faults.WindowMin, &s.Faults.WindowMax) },
			"leader-bias": floatInto(&s.Faults.LeaderBias),
		})
	case "safety":
		return parseDurationInto(d, &s.Safety)
	case "operations":
		return parseIntInto(d, &s.Operations)
	case "liveness":
		return parseDurationInto(d, &s.Liveness)
	case "rate":
		return o.rate(d)
	case "at":
		return o.event(d)
	case "profile":
		if err := d.want(2); err != nil {
			return err
		}
		s.Profile = d.words[1]
		return nil
	case "canary":
		if len(d.words) < 2 {
			return d.errorf("name the planted bug")
		}
		if !o.canaries {
			o.canaries, s.Canaries = true, nil
		}
		s.Canaries = append(s.Canaries, d.words[1:]...)
		return nil
	case "expect":
		return o.expect(d)
	}
	return d.errorf("unknown directive")
}

func (o *overlay) topic(d directive) error {
	if len(d.words) < 2 {
		return d.errorf("name the topic")
	}
	if !o.topics {
		o.topics, o.s.Topics = true, nil
	}
	t := Topic{Name: d.words[1]}
	words := d.words[2:]
	for len(words) > 0 {
		switch words[0] {
		case "page-cache":
			t.PageCache, words = true, words[1:]
			continue
		case "unclean":
			t.Unclean, words = true, words[1:]
			continue
		}
		if len(words) < 2 {
			return d.errorf("%s needs a value", words[0])
		}
		if target := topicDuration(&t, words[0]); target != nil {
			if err := durationInto(target)(words[1]); err != nil {
				return d.errorf("%s %q: %v", words[0], words[1], err)
			}
			words = words[2:]
			continue
		}
		var target *int
		switch words[0] {
		case "grow-to":
			target = &t.GrowTo
		case "partitions":
			target = &t.Partitions
		case "replication":
			target = &t.Replication
		case "min-insync":
			target = &t.MinInsync
		default:
			return d.errorf("unknown topic setting %q", words[0])
		}
		value, err := strconv.Atoi(words[1])
		if err != nil {
			return d.errorf("%s %q: %v", words[0], words[1], err)
		}
		*target, words = value, words[2:]
	}
	if t.Partitions == 0 {
		return d.errorf("topic %s needs partitions N", t.Name)
	}
	o.s.Topics = append(o.s.Topics, t)
	return nil
}

// parseCountAboveOne reads a producer setting's count from 1 to most
// (words[0] names it, words[1] is the count). One is what the producer
// does without the setting, so it reads as zero: a file round-trips.
func parseCountAboveOne(d directive, words []string, what string, most int) (int, error) {
	count, err := strconv.Atoi(words[1])
	if err != nil || count < 1 || count > most {
		return 0, d.errorf("%s %q; want a count of %s from 1 to %d", words[0], words[1], what, most)
	}
	if count == 1 {
		return 0, nil
	}
	return count, nil
}

func (o *overlay) producer(d directive) error {
	if len(d.words) < 2 {
		return d.errorf("name the producer")
	}
	if !o.producers {
		o.producers, o.s.Clients.Producers = true, nil
	}
	p := Producer{Name: d.words[1], Acks: -1}
	words := d.words[2:]
	for len(words) > 0 {
		if words[0] == "idempotent" {
			p.Idempotent, words = true, words[1:]
			continue
		}
		if len(words) < 2 {
			return d.errorf("%s needs a value", words[0])
		}
		var err error
		switch words[0] {
		case "topic":
			p.Topic = words[1]
		case "linger":
			p.Linger, err = time.ParseDuration(words[1])
			if err != nil || p.Linger < 0 || p.Linger > lingerMax {
				return d.errorf("linger %q; want a duration from 0 to %v", words[1], lingerMax)
			}
		case "batch":
			if p.BatchMax, err = parseCountAboveOne(d, words, "records", batchMax); err != nil {
				return err
			}
		case "in-flight":
			if p.InFlight, err = parseCountAboveOne(d, words, "sends", inFlightMax); err != nil {
				return err
			}
		case "compression":
			var known bool
			if p.Compression, known = batch.CodecNamed(words[1]); !known {
				return d.errorf("compression %q; want none, gzip, snappy, lz4 or zstd", words[1])
			}
		case "acks":
			switch words[1] {
			case "all", "-1":
				p.Acks = -1
			case "1":
				p.Acks = 1
			default:
				return d.errorf("acks %q; want all or 1", words[1])
			}
		case "partitions":
			p.Partitions, err = parsePartitions(words[1])
		default:
			return d.errorf("unknown producer setting %q", words[0])
		}
		if err != nil {
			return d.errorf("%v", err)
		}
		words = words[2:]
	}
	o.s.Clients.Producers = append(o.s.Clients.Producers, p)
	return nil
}

func (o *overlay) reader(d directive) error {
	if len(d.words) < 2 {
		return d.errorf("name the reader")
	}
	if !o.readers {
		o.readers, o.s.Clients.Readers = true, nil
	}
	r := Reader{Name: d.words[1]}
	err := parsePairs(directive{line: d.line, words: d.words[1:]}, map[string]func(string) error{
		"topic": func(v string) error { r.Topic = v; return nil },
		"partitions": func(v string) error {
			partitions, err := parsePartitions(v)
			r.Partitions = partitions
			return err
		},
	})
	if err != nil {
		return err
	}
	o.s.Clients.Readers = append(o.s.Clients.Readers, r)
	return nil
}

func (o *overlay) group(d directive) error {
	if len(d.words) < 2 {
		return d.errorf("name the group")
	}
	if !o.groups {
		o.groups, o.s.Clients.Groups = true, nil
	}
	g := Group{Name: d.words[1], Members: 2}
	words := []string{d.words[1]}
	for _, word := range d.words[2:] {
		if word == "static" {
			g.Static = true
			continue
		}
		words = append(words, word)
	}
	err := parsePairs(directive{line: d.line, words: words}, map[string]func(string) error{
		"topic":          func(v string) error { g.Topic = v; return nil },
		"members":        func(v string) error { return parseInt(v, &g.Members) },
		"offset-readers": func(v string) error { return parseInt(v, &g.OffsetReaders) },
		"balancer":       func(v string) error { g.Balancer = Balancer(v); return nil },
	})
	if err != nil {
		return err
	}
	o.s.Clients.Groups = append(o.s.Clients.Groups, g)
	return nil
}

// none reads `no producers`, `no readers`, `no groups`, `no rates` and
// `no faults`.
func (o *overlay) none(d directive) error {
	if err := d.want(2); err != nil {
		return err
	}
	s := o.s
	switch d.words[1] {
	case "producers":
		o.producers, s.Clients.Producers = true, nil
	case "readers":
		o.readers, s.Clients.Readers = true, nil
	case "groups":
		o.groups, s.Clients.Groups = true, nil
	case "rates":
		o.rates, s.Rates = true, nil
	case "faults":
		o.schedule, s.Schedule = true, nil
	default:
		return d.errorf("no %q: want producers, readers, groups, rates or faults", d.words[1])
	}
	return nil
}

func (o *overlay) timeouts(d directive) error {
	t := &o.s.Timeouts
	return parsePairs(d, map[string]func(string) error{
		"election":            durationInto(&t.Election),
		"quorum-fetch":        durationInto(&t.QuorumFetch),
		"broker-session":      durationInto(&t.BrokerSession),
		"broker-heartbeat":    durationInto(&t.BrokerHeartbeat),
		"replica-lag":         durationInto(&t.ReplicaLag),
		"replica-fetch-wait":  durationInto(&t.ReplicaFetchWait),
		"group-session":       durationInto(&t.GroupSession),
		"group-rebalance":     durationInto(&t.GroupRebalance),
		"group-initial-delay": durationInto(&t.GroupInitialDelay),
		"request":             durationInto(&t.Request),
		"delivery":            durationInto(&t.Delivery),
		"produce-wait":        durationInto(&t.ProduceWait),
		"fetch-wait":          durationInto(&t.FetchWait),
		"think":               durationInto(&t.Think),
		"restart":             durationInto(&t.Restart),
	})
}

func (o *overlay) rate(d directive) error {
	if err := d.want(3); err != nil {
		return err
	}
	if !o.rates {
		o.rates, o.s.Rates = true, nil
	}
	r := Rate{Kind: Kind(d.words[1])}
	if info, ok := infoOf(r.Kind); !ok || !info.drawn {
		return d.errorf("%q is not a fault kind the swarm draws (%v)", d.words[1], DrawnKinds())
	}
	mean, err := time.ParseDuration(d.words[2])
	if err != nil {
		return d.errorf("%v", err)
	}
	r.Mean = mean
	for _, existing := range o.s.Rates {
		if existing.Kind == r.Kind {
			return d.errorf("a second rate for %s", r.Kind)
		}
	}
	o.s.Rates = append(o.s.Rates, r)
	slices.SortStableFunc(o.s.Rates, func(a, b Rate) int { return kindOrder(a.Kind) - kindOrder(b.Kind) })
	return nil
}

func (o *overlay) event(d directive) error {
	if len(d.words) < 3 {
		return d.errorf("want at TIME KIND ...")
	}
	if !o.schedule {
		o.schedule, o.s.Schedule = true, nil
	}
	at, err := time.ParseDuration(d.words[1])
	if err != nil {
		return d.errorf("time %q: %v", d.words[1], err)
	}
	e, err := ParseEvent(d.words[2:])
	if err != nil {
		return d.errorf("%v", err)
	}
	e.At = at
	o.s.Schedule = append(o.s.Schedule, e)
	return nil
}

func (o *overlay) expect(d directive) error {
	switch {
	case len(d.words) == 2 && d.words[1] == "pass":
		o.s.Expect = Expect{}
	case len(d.words) == 2 && d.words[1] == "fail":
		o.s.Expect = Expect{Fail: true}
	case len(d.words) == 3 && d.words[1] == "fail":
		o.s.Expect = Expect{Fail: true, Check: d.words[2]}
	default:
		return d.errorf("want expect pass, expect fail or expect fail CHECK")
	}
	return nil
}

// finish settles what the file's replacements left inconsistent in the
// drawn parts, fills defaults that depend on other parts, and draws the
// schedule when the file gave none.
func (o *overlay) finish() {
	s := o.s
	if !o.clocks {
		for len(s.ClockRates) < s.Cluster.Nodes {
			s.ClockRates = append(s.ClockRates, 1)
		}
		s.ClockRates = s.ClockRates[:s.Cluster.Nodes]
	}
	for i := range s.Topics {
		t := &s.Topics[i]
		if t.Replication == 0 || (!o.topics && t.Replication > s.Cluster.Nodes) {
			t.Replication = min(3, s.Cluster.Nodes)
		}
		if t.MinInsync == 0 || (!o.topics && t.MinInsync > t.Replication) {
			t.MinInsync = min(2, t.Replication)
		}
	}
	retopic := func(topic *string, partitions *[]int32, drawn bool) {
		if *topic == "" || (drawn && !o.hasTopic(*topic)) {
			*topic = s.Topics[0].Name
		}
		if !drawn || partitions == nil {
			return
		}
		t, _ := s.Topic(*topic)
		var kept []int32
		for _, p := range *partitions {
			if int(p) < t.Partitions {
				kept = append(kept, p)
			}
		}
		if len(kept) == t.Partitions {
			kept = nil
		}
		*partitions = kept
	}
	for i := range s.Clients.Producers {
		p := &s.Clients.Producers[i]
		retopic(&p.Topic, &p.Partitions, !o.producers)
	}
	for i := range s.Clients.Readers {
		r := &s.Clients.Readers[i]
		retopic(&r.Topic, &r.Partitions, !o.readers)
	}
	for i := range s.Clients.Groups {
		g := &s.Clients.Groups[i]
		retopic(&g.Topic, nil, !o.groups)
	}
	switch {
	case o.schedule && !o.rates:
		s.Rates = nil
	case !o.schedule:
		// Drawing needs a sound cluster to aim at; if it is not,
		// Validate says why.
		s.Schedule = nil
		if s.validateCluster() == nil && s.validateTopics() == nil && s.validateClients() == nil && s.validatePhases() == nil && s.validateFaults() == nil {
			s.Schedule = GenerateSchedule(*s)
		}
	}
}

func (o *overlay) hasTopic(name string) bool {
	_, ok := o.s.Topic(name)
	return ok
}

// topicDuration is the topic's duration setting of the given name, nil for
// a name that is none.
func topicDuration(t *Topic, name string) *time.Duration {
	if name == "grow-at" {
		return &t.GrowAt
	}
	for _, a := range t.repeatingActions() {
		if a.name == name {
			return a.every
		}
	}
	return nil
}
