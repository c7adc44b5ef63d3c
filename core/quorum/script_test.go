package quorum

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"sluice/core/metadata"
)

// The interaction tests: each file under testdata/ is a script of commands,
// each followed by the trace it must produce (messages sent, what the nodes
// log). Run with -update to rewrite the expected traces after a deliberate
// change, then read the diff.
//
//	# comment
//	cluster voters=3
//	----
//
//	campaign 1
//	----
//	n1: became prospective epoch=0
//	1->2 Vote pre-vote epoch=1 last=-1/0
//	...
//
// Commands:
//
//	cluster voters=N [observers=M] [snapshot-every=K] [buggify=on]
//	                        the nodes, started; buggify switches every
//	                        BUGGIFY site on (small snapshot chunks)
//	campaign ID             ID's election timeout fires
//	tick ID                 advance ID's clock to its next timer, which fires
//	elapse ID|all DURATION  advance ID's (or every node's) clock
//	deliver [from=ID] [to=ID] [drop=(ID,...)]
//	                        deliver the frames queued now (matching from/to),
//	                        dropping those to the nodes in drop
//	stabilize               deliver until nothing is queued
//	propose ID VALUE        propose a record on ID
//	crash ID / restart ID   kill the process / start it on its disk
//	partition 1|2,3         cut every link between the groups
//	heal                    remove every cut
//	disk-stall ID / disk-resume ID   hold / release ID's disk syncs
//	resign ID               graceful resignation
//	status                  each node's role, epoch, offsets
//	applied                 each node's delivered records
var update = flag.Bool("update", false, "rewrite the expected traces in testdata/")

func TestInteractionScripts(t *testing.T) {
	files, err := filepath.Glob("testdata/*.txt")
	if err != nil || len(files) == 0 {
		t.Fatalf("no scripts: %v", err)
	}
	for _, file := range files {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".txt"), func(t *testing.T) {
			runScript(t, file)
		})
	}
}

// scriptCase is one command and its expected trace.
type scriptCase struct {
	comments []string // lines before the command
	command  string
	line     int
	expected string
	actual   string
}

func parseScript(t *testing.T, file string) []*scriptCase {
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(data), "\n")
	var cases []*scriptCase
	var comments []string
	for i := 0; i < len(lines); i++ {
		line := lines[i]
		switch {
		case strings.TrimSpace(line) == "" && len(comments) == 0:
			continue
		case strings.HasPrefix(line, "#") || strings.TrimSpace(line) == "":
			comments = append(comments, line)
			continue
		}
		c := &scriptCase{comments: comments, command: line, line: i + 1}
		comments = nil
		if i+1 >= len(lines) || lines[i+1] != "----" {
			t.Fatalf("%s:%d: command without ---- after it", file, i+1)
		}
		i += 2
		var out []string
		for ; i < len(lines) && lines[i] != ""; i++ {
			out = append(out, lines[i])
		}
		c.expected = strings.Join(out, "\n")
		cases = append(cases, c)
	}
	return cases
}

func runScript(t *testing.T, file string) {
	cases := parseScript(t, file)
	var c *testCluster
	for _, sc := range cases {
		if c == nil && !strings.HasPrefix(sc.command, "cluster") {
			t.Fatalf("%s:%d: the first command must be cluster", file, sc.line)
		}
		if c != nil {
			c.out.Reset()
		}
		c = runCommand(t, c, sc.command)
		sc.actual = strings.TrimRight(c.out.String(), "\n")
		if !*update && sc.actual != sc.expected {
			t.Errorf("%s:%d: %s\n--- expected\n%s\n--- actual\n%s", file, sc.line, sc.command, sc.expected, sc.actual)
		}
	}
	if *update {
		var b strings.Builder
		for i, sc := range cases {
			if i > 0 {
				b.WriteString("\n")
			}
			for _, comment := range sc.comments {
				if strings.TrimSpace(comment) != "" {
					b.WriteString(comment + "\n")
				}
			}
			b.WriteString(sc.command + "\n----\n")
			if sc.actual != "" {
				b.WriteString(sc.actual + "\n")
			}
		}
		if err := os.WriteFile(file, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

var dropPattern = regexp.MustCompile(`^drop=\(([0-9, ]*)\)$`)

// runCommand runs one command and returns the cluster (made by cluster).
func runCommand(t *testing.T, c *testCluster, command string) *testCluster {
	fields := strings.Fields(command)
	args := map[string]string{}
	for _, f := range fields[1:] {
		if key, value, ok := strings.Cut(f, "="); ok {
			args[key] = value
		}
	}
	node := func(i int) *testNode {
		if len(fields) <= i {
			t.Fatalf("%q: missing node", command)
		}
		id, err := strconv.Atoi(fields[i])
		n := c.nodes[int32(id)]
		if err != nil || n == nil {
			t.Fatalf("%q: no node %q", command, fields[i])
		}
		return n
	}
	running := func(n *testNode) *Quorum {
		if n.quorum == nil {
			t.Fatalf("%q: node %d is down", command, n.id)
		}
		return n.quorum
	}
	switch fields[0] {
	case "cluster":
		voters, _ := strconv.Atoi(args["voters"])
		observers, _ := strconv.Atoi(args["observers"])
		snapshotEvery, _ := strconv.Atoi(args["snapshot-every"])
		_, buggify := args["buggify"]
		return newTestClusterWith(t, voters, observers, snapshotEvery, buggify)
	case "campaign":
		running(node(1)).electionTimeout()
		c.settle()
	case "tick":
		n := node(1)
		if due, ok := n.clock.nextDue(); ok {
			n.clock.advance(due-n.clock.now, c.settle)
		}
	case "elapse":
		d, err := time.ParseDuration(fields[2])
		if err != nil {
			t.Fatalf("%q: %v", command, err)
		}
		if fields[1] == "all" {
			c.elapseAll(d)
		} else {
			node(1).clock.advance(d, c.settle)
		}
	case "deliver":
		match := func(m *message) bool {
			if from, ok := args["from"]; ok && strconv.Itoa(int(m.from())) != from {
				return false
			}
			if to, ok := args["to"]; ok && strconv.Itoa(int(m.to())) != to {
				return false
			}
			return true
		}
		dropped := map[int32]bool{}
		for _, f := range fields[1:] {
			if groups := dropPattern.FindStringSubmatch(f); groups != nil {
				for _, id := range strings.Split(groups[1], ",") {
					n, _ := strconv.Atoi(strings.TrimSpace(id))
					dropped[int32(n)] = true
				}
			}
		}
		c.deliver(match, func(m *message) bool { return dropped[m.to()] })
	case "stabilize":
		c.stabilize()
	case "propose":
		n := node(1)
		value := fields[2]
		running(n).Propose([]metadata.Record{testRecord(value)}, func(lastOffset int64, err error) {
			if err != nil {
				c.printf("n%d: proposal %s failed: %v", n.id, value, err)
				return
			}
			c.printf("n%d: proposal %s committed at %d", n.id, value, lastOffset)
		})
		c.settle()
	case "crash":
		n := node(1)
		n.crash()
		c.printf("n%d: crashed", n.id)
	case "restart":
		n := node(1)
		n.restart()
		c.settle()
	case "partition":
		groups := strings.Split(fields[1], "|")
		for _, a := range strings.Split(groups[0], ",") {
			for _, b := range strings.Split(groups[1], ",") {
				x, _ := strconv.Atoi(a)
				y, _ := strconv.Atoi(b)
				c.cut[[2]int32{int32(x), int32(y)}] = true
				c.cut[[2]int32{int32(y), int32(x)}] = true
			}
		}
	case "heal":
		c.cut = map[[2]int32]bool{}
	case "disk-stall":
		node(1).stalled = true
	case "disk-resume":
		node(1).resume()
		c.settle()
	case "resign":
		n := node(1)
		running(n).Resign(func() { c.printf("n%d: resigned", n.id) })
		c.settle()
	case "status":
		for _, id := range c.ids {
			c.printf("%s", c.nodes[id].status())
		}
	case "applied":
		for _, id := range c.ids {
			n := c.nodes[id]
			c.printf("n%d: %s", id, strings.Join(n.state.applied, " "))
		}
	case "describe":
		req := kmsg.NewPtrDescribeQuorumRequest()
		topic := kmsg.NewDescribeQuorumRequestTopic()
		topic.Topic = MetadataTopic
		topic.Partitions = append(topic.Partitions, kmsg.NewDescribeQuorumRequestTopicPartition())
		req.Topics = append(req.Topics, topic)
		running(node(1)).HandleDescribeQuorum(req, func(resp *kmsg.DescribeQuorumResponse) {
			p := resp.Topics[0].Partitions[0]
			c.printf("leader=%d epoch=%d hw=%d%s", p.LeaderID, p.LeaderEpoch, p.HighWatermark, errorSuffix(p.ErrorCode))
			for _, v := range p.CurrentVoters {
				c.printf("  voter %d end=%d", v.ReplicaID, v.LogEndOffset)
			}
			for _, v := range p.Observers {
				c.printf("  observer %d end=%d", v.ReplicaID, v.LogEndOffset)
			}
		})
	default:
		t.Fatalf("unknown command %q", command)
	}
	return c
}

// elapseAll advances every node's clock by d, a millisecond at a time and
// node by node within each, so that timers on different nodes fire in
// time order.
func (c *testCluster) elapseAll(d time.Duration) {
	for step := time.Duration(0); step < d; step += elapseStep {
		for _, id := range c.ids {
			c.nodes[id].clock.advance(min(elapseStep, d-step), c.settle)
		}
	}
}

// nextDue is when the clock's next live timer fires.
func (c *manualClock) nextDue() (time.Duration, bool) {
	found, due := false, time.Duration(0)
	for _, t := range c.timers {
		if !t.stopped && !t.fired && (!found || t.at < due) {
			found, due = true, t.at
		}
	}
	return due, found
}

// elapseStep is the resolution of elapse all.
const elapseStep = time.Millisecond

// status is one line about the node.
func (n *testNode) status() string {
	q := n.quorum
	if q == nil {
		return fmt.Sprintf("n%d: down", n.id)
	}
	l := q.metadataLog
	leader, _, _ := q.Leader()
	return fmt.Sprintf("n%d: %v epoch=%d leader=%d voted=%d hw=%d log=[%d,%d) synced=%d applied=%d",
		n.id, q.role, q.epoch, leader, q.votedFor, q.highWatermark, l.StartOffset(), l.EndOffset(), l.SyncedOffset(), q.appliedEnd)
}

func errorName(code int16) string {
	if err := kerr.ErrorForCode(code); err != nil {
		return err.(*kerr.Error).Message
	}
	return strconv.Itoa(int(code))
}
