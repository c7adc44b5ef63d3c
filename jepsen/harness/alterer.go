package harness

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"sluice/core/controller"
)

// alterer is an operator turning the workload topic's
// unclean.leader.election.enable on and off in turn, every
// Workload.AlterEvery, while the nemesis takes nodes down: the runbook for
// a partition whose in-sync replicas are all down, run over and over. Loss
// is then permitted only in the partitions a controller actually elected a
// leader of outside the ISR, which the nodes' logs say
// (uncleanElectedPartitions): everywhere else every promise holds.
type alterer struct {
	client *kgo.Client
	topic  string
	every  time.Duration
	background

	sent, confirmed atomic.Int64
	// turnedOn is set once a change turning it on was sent.
	turnedOn atomic.Bool
}

func newAlterer(cluster *Cluster, topic string, every time.Duration) (*alterer, error) {
	client, err := kgo.NewClient(cluster.ClientOptions()...)
	if err != nil {
		return nil, fmt.Errorf("harness: alterer: %w", err)
	}
	return &alterer{client: client, topic: topic, every: every}, nil
}

func (a *alterer) start(ctx context.Context) { a.background.start(ctx, a.run) }

// run flips the config until ctx ends, and leaves it off. A failed
// request (no controller, a timeout) is the faults at work: the next
// round asks for the same value again.
func (a *alterer) run(ctx context.Context) {
	admin := kadm.NewClient(a.client)
	ticker := time.NewTicker(a.every)
	defer ticker.Stop()
	on := true
	for {
		select {
		case <-ctx.Done():
			a.set(context.Background(), admin, false)
			return
		case <-ticker.C:
		}
		if a.set(ctx, admin, on) {
			on = !on
		}
	}
}

// set asks for one value and reports whether a controller confirmed it.
func (a *alterer) set(ctx context.Context, admin *kadm.Client, on bool) bool {
	if on {
		a.turnedOn.Store(true)
	}
	requestContext, cancel := context.WithTimeout(ctx, adminRequestTimeout)
	defer cancel()
	a.sent.Add(1)
	value := strconv.FormatBool(on)
	responses, err := admin.AlterTopicConfigs(requestContext, []kadm.AlterConfig{{Op: kadm.SetConfig, Name: "unclean.leader.election.enable", Value: &value}}, a.topic)
	if err != nil || len(responses) != 1 || responses[0].Err != nil {
		return false
	}
	a.confirmed.Add(1)
	return true
}

func (a *alterer) stop() {
	a.wait()
	a.client.Close()
}

// uncleanElectionLine matches a controller's log line for a leader it
// chose outside the ISR (controller.UncleanElectionMessage, logged by the
// nodes' text handler).
var uncleanElectionLine = regexp.MustCompile(`msg="` + regexp.QuoteMeta(controller.UncleanElectionMessage) + `".* topic=(\S+) partition=(\d+)`)

// uncleanElectedPartitions lists, sorted, the partitions of topic whose
// leader a controller chose outside the ISR according to the nodes' logs.
func uncleanElectedPartitions(logPaths []string, topic string) ([]int32, error) {
	var partitions []int32
	for _, path := range logPaths {
		file, err := os.Open(path)
		if err != nil {
			return nil, fmt.Errorf("harness: reading %s for unclean elections: %w", path, err)
		}
		scanner := bufio.NewScanner(file)
		scanner.Buffer(make([]byte, 64<<10), 1<<20)
		for scanner.Scan() {
			m := uncleanElectionLine.FindStringSubmatch(scanner.Text())
			if m == nil || m[1] != topic {
				continue
			}
			partition, err := strconv.ParseInt(m[2], 10, 32)
			if err == nil && !slices.Contains(partitions, int32(partition)) {
				partitions = append(partitions, int32(partition))
			}
		}
		err = scanner.Err()
		file.Close()
		if err != nil {
			return nil, fmt.Errorf("harness: reading %s for unclean elections: %w", path, err)
		}
	}
	slices.Sort(partitions)
	return partitions, nil
}
