package main

import (
	"context"
	"encoding/base64"
	"errors"
	"flag"
	"fmt"
	"os"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func init() {
	register("topic", "manage topics: create, list, describe, alter, delete, elect-leaders, reassign", runTopic)
}

const topicUsage = `usage: sluice topic <create|list|describe|alter|delete|elect-leaders|reassign|reassignments> [flags] [topic...]

  sluice topic create --partitions 6 --replication-factor 3 [--config retention.ms=60000] orders
  sluice topic list
  sluice topic describe orders
  sluice topic alter --config unclean.leader.election.enable=true [--delete-config retention.ms] orders
  sluice topic delete orders
  sluice topic delete --id <topic id, as describe prints it>
  sluice topic elect-leaders [--unclean] [orders ...]   (no topic: every partition)
  sluice topic reassign [--wait [--timeout 60s]] --partition 0 --replicas 3,4 orders
  sluice topic reassign --partition 0 --cancel orders
  sluice topic reassign [--cancel] [--wait] --reassignment-json-file reassign.json
  sluice topic reassignments [orders ...]   (no topic: every topic)

Flags go before the topic names.`

// adminTimeout bounds every admin request the tools make.
const adminTimeout = 30 * time.Second

func runTopic(args []string) int {
	if len(args) == 0 {
		fmt.Fprintln(os.Stderr, topicUsage)
		return 2
	}
	action, args := args[0], args[1:]
	flags := flag.NewFlagSet("topic "+action, flag.ContinueOnError)
	brokers := flags.String("brokers", "127.0.0.1:9092", "bootstrap brokers, comma-separated")
	partitions := flags.Int("partitions", -1, "partitions for create (-1: the broker's num.partitions)")
	replicationFactor := flags.Int("replication-factor", -1, "replication factor for create (-1: the broker's default)")
	var configs settings
	flags.Var(&configs, "config", "topic config key=value for create (repeatable)")
	var ids settings
	flags.Var(&ids, "id", "for delete: a topic id to delete, as describe prints it (repeatable); safer than a name that may be reused")
	var deleteConfigs settings
	flags.Var(&deleteConfigs, "delete-config", "for alter: a topic config to remove, back to the broker's default (repeatable)")
	unclean := flags.Bool("unclean", false, "for elect-leaders: give leaderless partitions a leader from outside the ISR (loses what only the ISR had), instead of moving leadership back to each partition's preferred replica")
	var reassign reassignOptions
	flags.IntVar(&reassign.partition, "partition", -1, "for reassign: the partition to reassign")
	flags.StringVar(&reassign.replicas, "replicas", "", "for reassign: the partition's new replicas, broker ids separated by commas, the preferred leader first")
	flags.BoolVar(&reassign.cancel, "cancel", false, "for reassign: cancel the partition's reassignment (or those of every partition in --reassignment-json-file): the replicas it was adding go, the others stay")
	flags.StringVar(&reassign.jsonFile, "reassignment-json-file", "", `for reassign: a kafka-reassign-partitions.sh file naming the partitions and their new replicas: {"version":1,"partitions":[{"topic":"orders","partition":0,"replicas":[3,4]}]}`)
	flags.BoolVar(&reassign.wait, "wait", false, "for reassign: wait until the reassignments complete, then print each partition's leader, replicas and ISR")
	flags.DurationVar(&reassign.timeout, "timeout", reassignWaitDefault, "for reassign --wait: how long to wait")
	flags.BoolVar(&reassign.fixedReplicationFactor, "disallow-replication-factor-change", false, "for reassign: refuse a target with another number of replicas than the partition has (KIP-1074)")
	positional, err := parseAnyOrder(flags, args)
	if err != nil {
		return 2
	}
	partitionCount, err := int32Flag("partitions", *partitions)
	if err != nil {
		fmt.Fprintln(os.Stderr, "sluice topic:", err)
		return 2
	}
	replicas, err := int16Flag("replication-factor", *replicationFactor)
	if err != nil {
		fmt.Fprintln(os.Stderr, "sluice topic:", err)
		return 2
	}
	client, err := kgo.NewClient(kgo.SeedBrokers(strings.Split(*brokers, ",")...))
	if err != nil {
		fmt.Fprintln(os.Stderr, "sluice topic:", err)
		return 1
	}
	defer client.Close()
	admin := kadm.NewClient(client)
	ctx, cancel := context.WithTimeout(context.Background(), adminTimeout)
	defer cancel()

	switch action {
	case "create":
		return topicCreate(ctx, admin, positional, partitionCount, replicas, configs)
	case "list":
		return topicList(ctx, admin)
	case "describe":
		return topicDescribe(ctx, admin, positional)
	case "alter":
		return topicAlter(ctx, admin, positional, configs, deleteConfigs)
	case "elect-leaders":
		return topicElectLeaders(ctx, admin, positional, *unclean)
	case "reassign":
		return topicReassign(admin, reassign, positional)
	case "reassignments":
		return topicReassignments(ctx, admin, client, positional)
	case "delete":
		if len(ids) > 0 {
			return topicDeleteByID(ctx, client, ids, positional)
		}
		return topicDelete(ctx, admin, positional)
	}
	fmt.Fprintln(os.Stderr, topicUsage)
	return 2
}

func topicCreate(ctx context.Context, admin *kadm.Client, topics []string, partitions int32, replicationFactor int16, configs settings) int {
	if len(topics) == 0 {
		fmt.Fprintln(os.Stderr, "sluice topic create: name at least one topic")
		return 2
	}
	topicConfigs := map[string]*string{}
	for _, c := range configs {
		key, value, ok := strings.Cut(c, "=")
		if !ok {
			fmt.Fprintf(os.Stderr, "sluice topic create: --config %q: expected key=value\n", c)
			return 2
		}
		topicConfigs[key] = kadm.StringPtr(value)
	}
	results, err := admin.CreateTopics(ctx, partitions, replicationFactor, topicConfigs, topics...)
	if err != nil {
		fmt.Fprintln(os.Stderr, "sluice topic create:", err)
		return 1
	}
	status := 0
	for _, r := range results.Sorted() {
		if r.Err != nil {
			fmt.Fprintf(os.Stderr, "%s: %v %s\n", r.Topic, r.Err, r.ErrMessage)
			status = 1
			continue
		}
		fmt.Printf("created %s (%d partitions, replication factor %d)\n", r.Topic, r.NumPartitions, r.ReplicationFactor)
	}
	return status
}

func topicList(ctx context.Context, admin *kadm.Client) int {
	details, err := admin.ListTopics(ctx)
	if err != nil {
		fmt.Fprintln(os.Stderr, "sluice topic list:", err)
		return 1
	}
	for _, name := range details.Names() {
		fmt.Println(name)
	}
	return 0
}

func topicDescribe(ctx context.Context, admin *kadm.Client, topics []string) int {
	details, err := admin.ListTopics(ctx, topics...)
	if err != nil {
		fmt.Fprintln(os.Stderr, "sluice topic describe:", err)
		return 1
	}
	w := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', 0)
	defer w.Flush()
	status := 0
	for _, name := range details.Names() {
		t := details[name]
		if t.Err != nil {
			fmt.Fprintf(os.Stderr, "%s: %v\n", name, t.Err)
			status = 1
			continue
		}
		fmt.Fprintf(w, "topic %s\tid %s\tpartitions %d\treplication factor %d\n", name, t.ID, len(t.Partitions), replicationFactor(t.Partitions))
		for _, p := range t.Partitions.Sorted() {
			fmt.Fprintf(w, "  partition %d\tleader %d\tepoch %d\treplicas %v\tisr %v\n", p.Partition, p.Leader, p.LeaderEpoch, p.Replicas, p.ISR)
		}
		configs, err := admin.DescribeTopicConfigs(ctx, name)
		if err == nil {
			for _, rc := range configs {
				sort.Slice(rc.Configs, func(i, j int) bool { return rc.Configs[i].Key < rc.Configs[j].Key })
				for _, c := range rc.Configs {
					if c.Source != 5 { // DEFAULT_CONFIG: only show what is set
						fmt.Fprintf(w, "  config %s=%s\t(%s)\n", c.Key, c.MaybeValue(), c.Source)
					}
				}
			}
		}
	}
	return status
}

// replicationFactor is partition 0's replica count, as kafka-topics.sh
// reports a topic's (a reassignment may leave partitions with different
// counts); kadm's NumReplicas takes whichever partition a map gives first.
func replicationFactor(partitions kadm.PartitionDetails) int {
	if p, ok := partitions[0]; ok {
		return len(p.Replicas)
	}
	return partitions.NumReplicas()
}

func topicDelete(ctx context.Context, admin *kadm.Client, topics []string) int {
	if len(topics) == 0 {
		fmt.Fprintln(os.Stderr, "sluice topic delete: name at least one topic")
		return 2
	}
	results, err := admin.DeleteTopics(ctx, topics...)
	if err != nil {
		fmt.Fprintln(os.Stderr, "sluice topic delete:", err)
		return 1
	}
	status := 0
	for _, r := range results.Sorted() {
		if r.Err != nil {
			fmt.Fprintf(os.Stderr, "%s: %v\n", r.Topic, r.Err)
			status = 1
			continue
		}
		fmt.Printf("deleted %s\n", r.Topic)
	}
	return status
}

// topicDeleteByID deletes topics named by id (DeleteTopics v6, KIP-516):
// unlike a name, an id never names the next topic created under the same
// name, so a delete that is retried or arrives late cannot take it.
func topicDeleteByID(ctx context.Context, client *kgo.Client, ids, names []string) int {
	if len(names) > 0 {
		fmt.Fprintln(os.Stderr, "sluice topic delete: name topics or give --id, not both")
		return 2
	}
	req := kmsg.NewPtrDeleteTopicsRequest()
	req.Version = 6
	req.TimeoutMillis = int32(adminTimeout.Milliseconds())
	for _, text := range ids {
		id, err := parseTopicID(text)
		if err != nil {
			fmt.Fprintf(os.Stderr, "sluice topic delete: --id %q: %v\n", text, err)
			return 2
		}
		topic := kmsg.NewDeleteTopicsRequestTopic()
		topic.TopicID = id
		req.Topics = append(req.Topics, topic)
	}
	resp, err := req.RequestWith(ctx, client)
	if err != nil {
		fmt.Fprintln(os.Stderr, "sluice topic delete:", err)
		return 1
	}
	status := 0
	for _, t := range resp.Topics {
		id := kadm.TopicID(t.TopicID)
		if err := kerr.ErrorForCode(t.ErrorCode); err != nil {
			fmt.Fprintf(os.Stderr, "%s: %v\n", id, err)
			status = 1
			continue
		}
		name := "?"
		if t.Topic != nil {
			name = *t.Topic
		}
		fmt.Printf("deleted %s (id %s)\n", name, id)
	}
	return status
}

// parseTopicID reads a topic id in base64, standard (as kadm and
// describe print it) or URL-safe (as Kafka's tools and partition.metadata
// write it), padded or not.
func parseTopicID(text string) ([16]byte, error) {
	var id [16]byte
	trimmed := strings.TrimRight(text, "=")
	for _, encoding := range []*base64.Encoding{base64.RawStdEncoding, base64.RawURLEncoding} {
		if decoded, err := encoding.DecodeString(trimmed); err == nil && len(decoded) == len(id) {
			copy(id[:], decoded)
			return id, nil
		}
	}
	return id, fmt.Errorf("not a topic id: want 16 bytes in base64")
}

// topicAlter sets and removes topic configs (IncrementalAlterConfigs), as
// kafka-configs.sh --alter does.
func topicAlter(ctx context.Context, admin *kadm.Client, topics []string, set, remove settings) int {
	if len(topics) == 0 || len(set)+len(remove) == 0 {
		fmt.Fprintln(os.Stderr, "sluice topic alter: name at least one topic and give --config key=value or --delete-config key")
		return 2
	}
	var alterations []kadm.AlterConfig
	for _, c := range set {
		key, value, ok := strings.Cut(c, "=")
		if !ok {
			fmt.Fprintf(os.Stderr, "sluice topic alter: --config %q: expected key=value\n", c)
			return 2
		}
		alterations = append(alterations, kadm.AlterConfig{Op: kadm.SetConfig, Name: key, Value: kadm.StringPtr(value)})
	}
	for _, key := range remove {
		alterations = append(alterations, kadm.AlterConfig{Op: kadm.DeleteConfig, Name: key})
	}
	responses, err := admin.AlterTopicConfigs(ctx, alterations, topics...)
	if err != nil {
		fmt.Fprintln(os.Stderr, "sluice topic alter:", err)
		return 1
	}
	status := 0
	for _, r := range responses {
		if r.Err != nil {
			fmt.Fprintf(os.Stderr, "%s: %v %s\n", r.Name, r.Err, r.ErrMessage)
			status = 1
			continue
		}
		fmt.Printf("altered %s\n", r.Name)
	}
	return status
}

// topicElectLeaders runs leader elections (ElectLeaders, as
// kafka-leader-election.sh): preferred by default, unclean with --unclean;
// for every partition of the topics named, or of every topic.
func topicElectLeaders(ctx context.Context, admin *kadm.Client, topics []string, unclean bool) int {
	how := kadm.ElectPreferredReplica
	if unclean {
		how = kadm.ElectLiveReplica
	}
	var set kadm.TopicsSet
	if len(topics) > 0 {
		details, err := admin.ListTopics(ctx, topics...)
		if err != nil {
			fmt.Fprintln(os.Stderr, "sluice topic elect-leaders:", err)
			return 1
		}
		set = kadm.TopicsSet{}
		for _, name := range topics {
			t, ok := details[name]
			if !ok || t.Err != nil {
				fmt.Fprintf(os.Stderr, "%s: %v\n", name, kerr.UnknownTopicOrPartition)
				return 1
			}
			for _, p := range t.Partitions {
				set.Add(name, p.Partition)
			}
		}
	}
	results, err := admin.ElectLeaders(ctx, how, set)
	if err != nil {
		fmt.Fprintln(os.Stderr, "sluice topic elect-leaders:", err)
		return 1
	}
	status, elected := 0, 0
	names := make([]string, 0, len(results))
	for name := range results {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		partitions := make([]int32, 0, len(results[name]))
		for p := range results[name] {
			partitions = append(partitions, p)
		}
		sort.Slice(partitions, func(i, j int) bool { return partitions[i] < partitions[j] })
		for _, p := range partitions {
			switch r := results[name][p]; {
			case r.Err == nil:
				fmt.Printf("elected a leader for %s-%d\n", name, p)
				elected++
			case errors.Is(r.Err, kerr.ElectionNotNeeded):
				fmt.Printf("%s-%d needs no election\n", name, p)
			default:
				fmt.Fprintf(os.Stderr, "%s-%d: %v %s\n", name, p, r.Err, r.ErrMessage)
				status = 1
			}
		}
	}
	if len(names) == 0 {
		fmt.Println("no partition needs an election")
	}
	return status
}
