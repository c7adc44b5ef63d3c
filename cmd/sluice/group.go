package main

import (
	"context"
	"flag"
	"fmt"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

func init() {
	register("group", "manage consumer groups: list, describe (with lag), delete, reset-offsets", runGroup)
}

const groupUsage = `usage: sluice group <list|describe|delete|reset-offsets> [flags] [group...]

  sluice group list
  sluice group describe billing            (each partition's committed offset, end offset, lag and owner)
  sluice group delete billing              (only a group with no members)
  sluice group reset-offsets --to-earliest [--topic orders] billing             (prints the plan)
  sluice group reset-offsets --to-offset 42 --topic orders --execute billing    (commits it)

reset-offsets takes one of --to-earliest, --to-latest, --to-offset N,
--shift-by N, as kafka-consumer-groups.sh does, and like it changes
nothing without --execute, nor while the group has members.

Flags go before the group names.`

func runGroup(args []string) int {
	if len(args) == 0 {
		fmt.Fprintln(os.Stderr, groupUsage)
		return 2
	}
	action, args := args[0], args[1:]
	flags := flag.NewFlagSet("group "+action, flag.ContinueOnError)
	brokers := flags.String("brokers", "127.0.0.1:9092", "bootstrap brokers, comma-separated")
	var reset offsetReset
	flags.BoolVar(&reset.toEarliest, "to-earliest", false, "for reset-offsets: each partition's log start")
	flags.BoolVar(&reset.toLatest, "to-latest", false, "for reset-offsets: each partition's end (skip everything there now)")
	toOffset := flags.String("to-offset", "", "for reset-offsets: this offset, within each partition's log start and end")
	shiftBy := flags.String("shift-by", "", "for reset-offsets: move each committed offset by N (negative: back), within the log start and end")
	var topics settings
	flags.Var(&topics, "topic", "for reset-offsets: a topic whose offsets to reset (repeatable; default: every topic the group has committed offsets for)")
	flags.BoolVar(&reset.execute, "execute", false, "for reset-offsets: commit the new offsets (without it, only print them)")
	if err := flags.Parse(args); err != nil {
		return 2
	}
	if action == "reset-offsets" {
		if err := reset.parse(*toOffset, *shiftBy); err != nil {
			fmt.Fprintln(os.Stderr, "sluice group reset-offsets:", err)
			return 2
		}
	}
	reset.topics = topics
	client, err := kgo.NewClient(kgo.SeedBrokers(strings.Split(*brokers, ",")...))
	if err != nil {
		fmt.Fprintln(os.Stderr, "sluice group:", err)
		return 1
	}
	defer client.Close()
	admin := kadm.NewClient(client)
	ctx, cancel := context.WithTimeout(context.Background(), adminTimeout)
	defer cancel()

	switch action {
	case "list":
		return groupList(ctx, admin)
	case "describe":
		return groupDescribe(ctx, admin, flags.Args())
	case "delete":
		return groupDelete(ctx, admin, flags.Args())
	case "reset-offsets":
		return groupResetOffsets(ctx, admin, flags.Args(), reset)
	}
	fmt.Fprintln(os.Stderr, groupUsage)
	return 2
}

func groupList(ctx context.Context, admin *kadm.Client) int {
	groups, err := admin.ListGroups(ctx)
	if err != nil {
		fmt.Fprintln(os.Stderr, "sluice group list:", err)
		return 1
	}
	w := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "GROUP\tSTATE\tPROTOCOL-TYPE")
	for _, g := range groups.Sorted() {
		fmt.Fprintf(w, "%s\t%s\t%s\n", g.Group, g.State, g.ProtocolType)
	}
	w.Flush()
	return 0
}

// groupDescribe prints what kafka-consumer-groups.sh --describe does: per
// partition the group has committed or owns, the committed offset, the
// partition's end, the lag between them and the member that owns it.
func groupDescribe(ctx context.Context, admin *kadm.Client, groups []string) int {
	if len(groups) == 0 {
		fmt.Fprintln(os.Stderr, "sluice group describe: name at least one group")
		return 2
	}
	lags, err := admin.Lag(ctx, groups...)
	if err != nil {
		fmt.Fprintln(os.Stderr, "sluice group describe:", err)
		return 1
	}
	status := 0
	for i, name := range groups {
		l, ok := lags[name]
		if i > 0 {
			fmt.Println()
		}
		switch {
		case !ok:
			fmt.Fprintf(os.Stderr, "%s: no answer for the group\n", name)
			status = 1
			continue
		case l.Error() != nil:
			fmt.Fprintf(os.Stderr, "%s: %v\n", name, l.Error())
			status = 1
			continue
		case groupAbsent(l):
			fmt.Fprintf(os.Stderr, "%s: group does not exist (no members, no committed offsets)\n", name)
			status = 1
			continue
		}
		fmt.Printf("group %s  state %s  protocol %s  coordinator %d  members %d\n",
			l.Group, l.State, orDash(l.Protocol), l.Coordinator.NodeID, len(l.Members))
		w := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', 0)
		fmt.Fprintln(w, "TOPIC\tPARTITION\tCURRENT-OFFSET\tLOG-END-OFFSET\tLAG\tCONSUMER-ID\tHOST\tCLIENT-ID")
		for _, p := range l.Lag.Sorted() {
			current, lag := "-", "-"
			if p.Commit.At >= 0 {
				current = strconv.FormatInt(p.Commit.At, 10)
			}
			if p.Err == nil && p.Lag >= 0 {
				lag = strconv.FormatInt(p.Lag, 10)
			}
			end := "-"
			if p.End.Err == nil {
				end = strconv.FormatInt(p.End.Offset, 10)
			}
			member, host, clientID := "-", "-", "-"
			if p.Member != nil {
				member, host, clientID = p.Member.MemberID, p.Member.ClientHost, p.Member.ClientID
			}
			fmt.Fprintf(w, "%s\t%d\t%s\t%s\t%s\t%s\t%s\t%s\n", p.Topic, p.Partition, current, end, lag, member, host, clientID)
			if p.Err != nil {
				fmt.Fprintf(os.Stderr, "%s: %s[%d]: %v\n", name, p.Topic, p.Partition, p.Err)
			}
		}
		for _, m := range membersOwningNothing(l) {
			fmt.Fprintf(w, "-\t-\t-\t-\t-\t%s\t%s\t%s\n", m.MemberID, m.ClientHost, m.ClientID)
		}
		w.Flush()
	}
	return status
}

// membersOwningNothing are the members no partition's row names, which
// kafka-consumer-groups.sh also lists: a group with more members than
// partitions has some.
func membersOwningNothing(l kadm.DescribedGroupLag) []kadm.DescribedGroupMember {
	owning := map[string]bool{}
	for _, p := range l.Lag.Sorted() {
		if p.Member != nil {
			owning[p.Member.MemberID] = true
		}
	}
	var idle []kadm.DescribedGroupMember
	for _, m := range l.Members { // kadm sorts them
		if !owning[m.MemberID] {
			idle = append(idle, m)
		}
	}
	return idle
}

// groupAbsent says whether a described group is one the coordinator does not
// know: Kafka answers DescribeGroups for any name, with state Dead.
func groupAbsent(l kadm.DescribedGroupLag) bool {
	return l.State == "Dead" && len(l.Members) == 0 && len(l.Lag) == 0
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func groupDelete(ctx context.Context, admin *kadm.Client, groups []string) int {
	if len(groups) == 0 {
		fmt.Fprintln(os.Stderr, "sluice group delete: name at least one group")
		return 2
	}
	results, err := admin.DeleteGroups(ctx, groups...)
	if err != nil {
		fmt.Fprintln(os.Stderr, "sluice group delete:", err)
		return 1
	}
	status := 0
	for _, r := range results.Sorted() {
		if r.Err != nil {
			fmt.Fprintf(os.Stderr, "%s: %v\n", r.Group, r.Err)
			status = 1
			continue
		}
		fmt.Printf("deleted group %s\n", r.Group)
	}
	return status
}

// offsetReset is where reset-offsets moves each partition's committed offset.
type offsetReset struct {
	toEarliest, toLatest bool
	toOffset             *int64
	shiftBy              *int64
	topics               []string
	execute              bool
}

func (r *offsetReset) parse(toOffset, shiftBy string) error {
	if toOffset != "" {
		n, err := strconv.ParseInt(toOffset, 10, 64)
		if err != nil || n < 0 {
			return fmt.Errorf("--to-offset %q: want an offset, 0 or more", toOffset)
		}
		r.toOffset = &n
	}
	if shiftBy != "" {
		n, err := strconv.ParseInt(shiftBy, 10, 64)
		if err != nil {
			return fmt.Errorf("--shift-by %q: want a whole number of records", shiftBy)
		}
		r.shiftBy = &n
	}
	chosen := 0
	for _, on := range []bool{r.toEarliest, r.toLatest, r.toOffset != nil, r.shiftBy != nil} {
		if on {
			chosen++
		}
	}
	if chosen != 1 {
		return fmt.Errorf("give exactly one of --to-earliest, --to-latest, --to-offset N, --shift-by N")
	}
	return nil
}

// target is the new offset of one partition whose committed offset is
// committed (-1 if none), log start and end as given; it never leaves
// [start, end], as Kafka clamps a reset.
func (r offsetReset) target(committed, start, end int64) int64 {
	var at int64
	switch {
	case r.toEarliest:
		at = start
	case r.toLatest:
		at = end
	case r.toOffset != nil:
		at = *r.toOffset
	default:
		if committed < 0 {
			committed = end // nothing committed: the group would start at the end (auto.offset.reset=latest)
		}
		at = committed + *r.shiftBy
	}
	return min(max(at, start), end)
}

// groupResetOffsets is kafka-consumer-groups.sh --reset-offsets: it moves the
// group's committed offsets for the topics named (or all it has committed),
// printing the plan, and commits it only with --execute and only while the
// group has no members, whose own commits would overwrite it.
func groupResetOffsets(ctx context.Context, admin *kadm.Client, groups []string, reset offsetReset) int {
	if len(groups) != 1 {
		fmt.Fprintln(os.Stderr, "sluice group reset-offsets: name one group")
		return 2
	}
	group := groups[0]
	described, err := admin.DescribeGroups(ctx, group)
	if err == nil {
		err = described.Error()
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "sluice group reset-offsets: %s: %v\n", group, err)
		return 1
	}
	if d := described[group]; d.State != "Empty" && d.State != "Dead" {
		fmt.Fprintf(os.Stderr, "sluice group reset-offsets: %s is %s with %d members: offsets can only be reset while the group has none (stop its consumers first)\n", group, d.State, len(d.Members))
		return 1
	}
	committed, err := admin.FetchOffsets(ctx, group)
	if err == nil {
		err = committed.Error()
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "sluice group reset-offsets: %s: fetching its offsets: %v\n", group, err)
		return 1
	}
	topics := reset.topics
	if len(topics) == 0 {
		topics = committed.Offsets().TopicsSet().Topics()
		if len(topics) == 0 {
			fmt.Fprintf(os.Stderr, "sluice group reset-offsets: %s has committed no offsets; name the topics with --topic\n", group)
			return 1
		}
	}
	starts, err := admin.ListStartOffsets(ctx, topics...)
	if err == nil {
		err = starts.Error()
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "sluice group reset-offsets: listing log starts: %v\n", err)
		return 1
	}
	ends, err := admin.ListEndOffsets(ctx, topics...)
	if err == nil {
		err = ends.Error()
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "sluice group reset-offsets: listing log ends: %v\n", err)
		return 1
	}

	plan := kadm.Offsets{}
	w := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "GROUP\tTOPIC\tPARTITION\tCURRENT-OFFSET\tNEW-OFFSET")
	slices.Sort(topics)
	for _, topic := range topics {
		partitions := ends[topic]
		for _, p := range slices.Sorted(maps.Keys(partitions)) {
			current := int64(-1)
			if o, ok := committed.Lookup(topic, p); ok {
				current = o.At
			}
			start, _ := starts.Lookup(topic, p)
			at := reset.target(current, start.Offset, partitions[p].Offset)
			plan.Add(kadm.Offset{Topic: topic, Partition: p, At: at, LeaderEpoch: -1})
			currentText := "-"
			if current >= 0 {
				currentText = strconv.FormatInt(current, 10)
			}
			fmt.Fprintf(w, "%s\t%s\t%d\t%s\t%d\n", group, topic, p, currentText, at)
		}
	}
	w.Flush()
	if !reset.execute {
		fmt.Fprintln(os.Stderr, "dry run: nothing committed; add --execute to commit these offsets")
		return 0
	}
	results, err := admin.CommitOffsets(ctx, group, plan)
	if err == nil {
		err = results.Error()
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "sluice group reset-offsets: %s: committing: %v\n", group, err)
		return 1
	}
	fmt.Fprintf(os.Stderr, "committed %d offsets for group %s\n", len(plan.Sorted()), group)
	return 0
}
