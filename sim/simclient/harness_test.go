package simclient

import (
	"fmt"
	"io"
	"log/slog"
	"os"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"sluice/core"
	"sluice/core/broker"
	"sluice/jepsen/history"
	"sluice/sim"
	"sluice/sim/kernel"
	"sluice/sim/simdisk"
	"sluice/sim/simnet"
)

// cluster is one simulated Sluice broker and the clients under test.
type cluster struct {
	t         *testing.T
	kernel    *kernel.Kernel
	network   *simnet.Network
	machine   *sim.Machine
	broker    *broker.Broker
	recorder  *history.Recorder
	processes *Processes
	// configure adjusts the broker's config before each start.
	configure func(*broker.Config)
}

const (
	testTopic      = "events"
	testPartitions = 2
	testAddress    = "n1:9092"
)

func newCluster(t *testing.T, seed uint64, disk simdisk.Faults, options ...clusterOption) *cluster {
	t.Helper()
	k := kernel.NewKernel(seed, kernel.NewTrace(traceOutput()))
	network := simnet.New(k, kernel.NewRand(seed, "net"), simnet.Faults{LatencyMin: 100 * time.Microsecond, LatencyMax: time.Millisecond})
	c := &cluster{t: t, kernel: k, network: network, processes: &Processes{}}
	c.recorder = history.NewRecorder(k.Now)
	machineOptions := sim.MachineOptions{Disk: disk}
	if os.Getenv("SIMCLIENT_TRACE") == "debug" {
		machineOptions.LogLevel = slog.LevelDebug
	}
	for _, option := range options {
		option(c, &machineOptions)
	}
	c.machine = sim.NewMachine(k, network, "n1", machineOptions)
	c.startBroker()
	return c
}

func (c *cluster) startBroker() {
	c.t.Helper()
	config := broker.DefaultConfig()
	config.AdvertisedHost, config.AdvertisedPort = "n1", 9092
	config.DefaultPartitions = testPartitions
	if c.configure != nil {
		c.configure(&config)
	}
	b, err := broker.Start(c.machine.World(), config)
	if err != nil {
		c.t.Fatalf("broker start: %v", err)
	}
	if err := c.machine.Net.Listen(testAddress, b); err != nil {
		c.t.Fatalf("listen: %v", err)
	}
	c.broker = b
}

// clusterOption adjusts a cluster before its broker starts.
type clusterOption func(*cluster, *sim.MachineOptions)

// withBrokerConfig adjusts the broker's config.
func withBrokerConfig(configure func(*broker.Config)) clusterOption {
	return func(c *cluster, _ *sim.MachineOptions) { c.configure = configure }
}

// withCanaries plants bugs in the broker.
func withCanaries(names ...string) clusterOption {
	return func(_ *cluster, m *sim.MachineOptions) { m.Canaries = core.NewCanaries(names...) }
}

// crashBroker crashes the broker machine and starts it again at once.
func (c *cluster) crashBroker() {
	c.machine.Crash()
	c.machine.Restart()
	c.startBroker()
}

func (c *cluster) client(name string, configure ...func(*Config)) *Client {
	config := Config{Name: name, Bootstrap: []string{testAddress}, AutoCreateTopics: true}
	for _, f := range configure {
		f(&config)
	}
	return New(c.kernel, c.network, config)
}

// send sends one value and returns a pointer its result lands in.
func (c *cluster) send(p *Producer, partition int32, value string) *SendResult {
	c.t.Helper()
	result := &SendResult{}
	if err := p.Send(tp(partition), "k", value, func(r SendResult) { *result = r }); err != nil {
		c.t.Fatalf("send %s: %v", value, err)
	}
	return result
}

// drain reads every partition from the start with a fresh reader and
// returns the history afterwards.
func (c *cluster) drain(name string) []history.Op {
	c.t.Helper()
	reader := NewReader(c.client(name), ReaderConfig{}, c.recorder, c.processes)
	var all []history.TopicPartition
	for partition := range int32(testPartitions) {
		all = append(all, tp(partition))
	}
	if err := reader.Assign(all); err != nil {
		c.t.Fatal(err)
	}
	drained := false
	reader.Drain(func() { drained = true })
	c.runUntil(time.Minute, "the drain", func() bool { return drained })
	return c.recorder.History()
}

// run advances virtual time by d.
func (c *cluster) run(d time.Duration) { c.kernel.RunUntil(c.kernel.Now() + int64(d)) }

// runUntil runs until cond holds, failing the test after limit.
func (c *cluster) runUntil(limit time.Duration, what string, cond func() bool) {
	c.t.Helper()
	if !c.kernel.RunWhile(c.kernel.Now()+int64(limit), func() bool { return !cond() }) {
		c.t.Fatalf("%s did not happen within %v", what, limit)
	}
}

func tp(partition int32) history.TopicPartition {
	return history.TopicPartition{Topic: testTopic, Partition: partition}
}

// sendAll sends count values to partition, one after the other, and
// returns their results in order.
func (c *cluster) sendAll(p *Producer, partition int32, prefix string, count int) []SendResult {
	c.t.Helper()
	var results []SendResult
	var next func()
	next = func() {
		if len(results) == count {
			return
		}
		value := fmt.Sprintf("%s-%d", prefix, len(results))
		if err := p.Send(tp(partition), "k", value, func(r SendResult) {
			results = append(results, r)
			next()
		}); err != nil {
			c.t.Fatalf("send %s: %v", value, err)
		}
	}
	next()
	c.runUntil(time.Minute, "every send finishing", func() bool { return len(results) == count })
	return results
}

// completions returns the history's completions of one function, in order.
func completions(ops []history.Op, f history.Func) []history.Op {
	var found []history.Op
	for _, op := range ops {
		if op.F == f && op.Type != history.Invoke {
			found = append(found, op)
		}
	}
	return found
}

// polledValues lists the values polled from one partition, in history order.
func polledValues(ops []history.Op, partition history.TopicPartition) []string {
	var values []string
	for _, op := range completions(ops, history.FuncPoll) {
		for _, poll := range op.Polls {
			if poll.Partition != partition {
				continue
			}
			for _, record := range poll.Records {
				values = append(values, record.Value)
			}
		}
	}
	return values
}

var _ core.Acceptor = (*broker.Broker)(nil)

// traceOutput prints traces when SIMCLIENT_TRACE is set.
func traceOutput() io.Writer {
	if os.Getenv("SIMCLIENT_TRACE") != "" {
		return os.Stdout
	}
	return nil
}

// createTopic creates the test topic through a client with the default
// timeouts and runs until every partition has a leader. Tests whose
// requests time out on purpose (slow syncs, short request timeouts) call it
// first: otherwise the broker's own start-up — registering itself takes a
// few metadata-log syncs — eats their delivery timeout before their send
// reaches a partition.
func (c *cluster) createTopic() {
	c.t.Helper()
	admin := c.client("admin")
	ready := false
	var ask func()
	ask = func() {
		request := kmsg.NewPtrMetadataRequest()
		topic := kmsg.NewMetadataRequestTopic()
		topic.Topic = kmsg.StringPtr(testTopic)
		request.Topics = append(request.Topics, topic)
		request.AllowAutoTopicCreation = true
		admin.RequestAny(request, func(response kmsg.Response, err error) {
			if err == nil {
				led := 0
				for _, t := range response.(*kmsg.MetadataResponse).Topics {
					for _, p := range t.Partitions {
						if p.ErrorCode == 0 && p.Leader >= 0 {
							led++
						}
					}
				}
				if led == testPartitions {
					ready = true
					return
				}
			}
			admin.After(100*time.Millisecond, "createTopic.retry", ask)
		})
	}
	ask()
	c.runUntil(time.Minute, "the test topic's creation", func() bool { return ready })
}
