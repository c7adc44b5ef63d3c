//go:build unix

package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestClusterCommandFailsOver runs the real binary as `sluice cluster
// --nodes 3`, creates a topic of 6 partitions with replication factor 3
// through kadm, checks that the leaders are spread over the 3 brokers,
// kills the controller leader's process with SIGKILL, and measures how long
// the survivors take to show a new controller leader (DescribeQuorum) and
// to name it in Metadata. The times are logged; the test only requires
// that it happens within failoverWaitMax.
func TestClusterCommandFailsOver(t *testing.T) {
	if testing.Short() {
		t.Skip("starts three real broker processes")
	}
	binary := buildSluice(t)
	port := freePortRange(t, 6)
	dataDir := t.TempDir()
	cluster := startClusterCommand(t, binary, port, dataDir)

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	// Every broker registered and unfenced, as each node sees it. A
	// fresh client each time: a client keeps the broker list it learned
	// first, from a node that may have known only itself.
	waitFor(t, "three brokers in every node's Metadata", failoverWaitMax, func() bool {
		for _, address := range cluster.bootstrap {
			if brokersSeenBy(ctx, address) != 3 {
				return false
			}
		}
		return true
	})
	client, err := kgo.NewClient(kgo.SeedBrokers(cluster.bootstrap...))
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	admin := kadm.NewClient(client)

	created, err := admin.CreateTopic(ctx, 6, 3, nil, "orders")
	if err != nil || created.Err != nil {
		t.Fatalf("creating the topic: %v, %v", err, created.Err)
	}
	// CreateTopics answers once the controller committed the topic; each
	// broker learns it from the metadata log a moment later, so Metadata
	// is asked until the answering broker shows all six partitions led.
	var md kadm.Metadata
	for {
		md, err = admin.Metadata(ctx, "orders")
		if err != nil {
			t.Fatal(err)
		}
		led := 0
		for _, p := range md.Topics["orders"].Partitions {
			if p.Leader >= 0 && p.Err == nil {
				led++
			}
		}
		if led == 6 {
			break
		}
		select {
		case <-ctx.Done():
			t.Fatalf("the topic's partitions were never all led: %+v", md.Topics["orders"].Partitions)
		case <-time.After(50 * time.Millisecond):
		}
	}
	leads := map[int32]int{}
	for _, p := range md.Topics["orders"].Partitions {
		if len(p.Replicas) != 3 || len(p.ISR) != 3 {
			t.Fatalf("partition %d: replicas %v ISR %v", p.Partition, p.Replicas, p.ISR)
		}
		leads[p.Leader]++
	}
	if len(leads) != 3 || leads[1] != 2 || leads[2] != 2 || leads[3] != 2 {
		t.Fatalf("partitions led per broker: %v; want 2 each on brokers 1, 2 and 3", leads)
	}

	old := quorumLeader(ctx, t, client, 1, 2, 3)
	if old < 1 {
		t.Fatal("no quorum leader known")
	}
	killed := time.Now()
	if err := syscall.Kill(cluster.pids[old], syscall.SIGKILL); err != nil {
		t.Fatalf("killing node %d: %v", old, err)
	}
	var survivors []int32
	for id := int32(1); id <= 3; id++ {
		if id != old {
			survivors = append(survivors, id)
		}
	}
	var newLeader int32
	waitFor(t, "a new quorum leader", failoverWaitMax, func() bool {
		newLeader = quorumLeader(ctx, t, client, survivors...)
		return newLeader > 0 && newLeader != old
	})
	toQuorumLeader := time.Since(killed)
	waitFor(t, "Metadata naming the new controller", failoverWaitMax, func() bool {
		resp, err := requestFrom(ctx, client, survivors[0], kmsg.NewPtrMetadataRequest())
		return err == nil && resp.(*kmsg.MetadataResponse).ControllerID == newLeader
	})
	toMetadata := time.Since(killed)
	t.Logf("controller failover: node %d killed; node %d leads the quorum after %v, and Metadata names it after %v",
		old, newLeader, toQuorumLeader.Round(time.Millisecond), toMetadata.Round(time.Millisecond))

	// Admin requests work again, through a survivor.
	survivorClient, err := kgo.NewClient(kgo.SeedBrokers(cluster.addresses[survivors[0]]))
	if err != nil {
		t.Fatal(err)
	}
	defer survivorClient.Close()
	again, err := kadm.NewClient(survivorClient).CreateTopic(ctx, 2, 2, nil, "after-failover")
	if err != nil || again.Err != nil {
		t.Fatalf("creating a topic after the failover: %v, %v", err, again.Err)
	}
	cluster.stop(t)
}

// failoverWaitMax bounds every wait of the test: far beyond the election
// and session timeouts (1 s to 2 s, 9 s).
const failoverWaitMax = 60 * time.Second

// quorumLeader asks the given nodes for the quorum's leader (DescribeQuorum,
// which a broker forwards to the leader) and returns the first answer, or
// -1.
func quorumLeader(ctx context.Context, t *testing.T, client *kgo.Client, nodes ...int32) int32 {
	t.Helper()
	for _, node := range nodes {
		req := kmsg.NewPtrDescribeQuorumRequest()
		req.Version = 1
		topic := kmsg.NewDescribeQuorumRequestTopic()
		topic.Topic = "__cluster_metadata"
		partition := kmsg.NewDescribeQuorumRequestTopicPartition()
		topic.Partitions = append(topic.Partitions, partition)
		req.Topics = append(req.Topics, topic)
		resp, err := requestFrom(ctx, client, node, req)
		if err != nil {
			continue
		}
		r := resp.(*kmsg.DescribeQuorumResponse)
		if r.ErrorCode == 0 && len(r.Topics) == 1 && len(r.Topics[0].Partitions) == 1 && r.Topics[0].Partitions[0].ErrorCode == 0 {
			return r.Topics[0].Partitions[0].LeaderID
		}
	}
	return -1
}

// brokersSeenBy counts the brokers the node at address lists in Metadata,
// -1 when it does not answer.
func brokersSeenBy(ctx context.Context, address string) int {
	client, err := kgo.NewClient(kgo.SeedBrokers(address))
	if err != nil {
		return -1
	}
	defer client.Close()
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	resp, err := client.Request(ctx, kmsg.NewPtrMetadataRequest())
	if err != nil {
		return -1
	}
	return len(resp.(*kmsg.MetadataResponse).Brokers)
}

// requestFrom sends req to one broker, with a short timeout of its own.
func requestFrom(ctx context.Context, client *kgo.Client, node int32, req kmsg.Request) (kmsg.Response, error) {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	return client.Broker(int(node)).Request(ctx, req)
}

// waitFor polls cond every 50 ms until it holds, failing the test after
// limit.
func waitFor(t *testing.T, what string, limit time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %v", what, limit)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// clusterProcess is a running `sluice cluster`.
type clusterProcess struct {
	cmd       *exec.Cmd
	pids      map[int32]int
	addresses map[int32]string
	bootstrap []string
	exited    chan error
	output    *lockedBuffer
}

var nodeLine = regexp.MustCompile(`^node (\d+): pid (\d+), clients (\S+),`)

// startClusterCommand starts `sluice cluster --nodes 3` and reads the
// nodes' pids and the bootstrap address from its output.
func startClusterCommand(t *testing.T, binary string, port int, dataDir string) *clusterProcess {
	t.Helper()
	cmd := exec.Command(binary, "cluster", "--nodes", "3", "--port", strconv.Itoa(port), "--data", dataDir)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	c := &clusterProcess{cmd: cmd, pids: map[int32]int{}, addresses: map[int32]string{}, exited: make(chan error, 1), output: &lockedBuffer{}}
	cmd.Stderr = c.output
	// The cluster (and through it every node) dies with the test.
	cmd.SysProcAttr = childProcessAttributes()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { c.exited <- cmd.Wait() }()
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			cmd.Process.Signal(syscall.SIGKILL)
			<-c.exited
		}
		if t.Failed() {
			t.Logf("sluice cluster output (last lines):\n%s", lastLines(c.output.String(), 150))
		}
	})
	lines := bufio.NewScanner(stdout)
	for lines.Scan() {
		line := lines.Text()
		if m := nodeLine.FindStringSubmatch(line); m != nil {
			id, _ := strconv.Atoi(m[1])
			pid, _ := strconv.Atoi(m[2])
			c.pids[int32(id)], c.addresses[int32(id)] = pid, m[3]
		}
		if rest, ok := strings.CutPrefix(line, "bootstrap: "); ok {
			c.bootstrap = strings.Split(rest, ",")
			break
		}
	}
	go io.Copy(io.Discard, stdout)
	if len(c.pids) != 3 || len(c.bootstrap) != 3 {
		t.Fatalf("sluice cluster printed pids %v and bootstrap %v", c.pids, c.bootstrap)
	}
	return c
}

// stop sends SIGTERM and waits for `sluice cluster` to stop every node.
func (c *clusterProcess) stop(t *testing.T) {
	t.Helper()
	if err := c.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-c.exited:
		// One node was killed on purpose; the others stop cleanly.
		if err != nil {
			t.Logf("sluice cluster exited: %v", err)
		}
	case <-time.After(failoverWaitMax):
		t.Fatal("sluice cluster did not stop after SIGTERM")
	}
}

// buildSluice builds this command into the test's temporary directory,
// unless SLUICE_BINARY names one already built.
func buildSluice(t *testing.T) string {
	t.Helper()
	if prebuilt := os.Getenv("SLUICE_BINARY"); prebuilt != "" {
		path, err := filepath.Abs(prebuilt)
		if err != nil {
			t.Fatal(err)
		}
		return path
	}
	path := filepath.Join(t.TempDir(), "sluice")
	cmd := exec.Command("go", "build", "-o", path, ".")
	if output, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, output)
	}
	return path
}

// freePortRange finds n consecutive free TCP ports on 127.0.0.1.
func freePortRange(t *testing.T, n int) int {
	t.Helper()
	for attempt := 0; attempt < 50; attempt++ {
		probe, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		base := probe.Addr().(*net.TCPAddr).Port
		probe.Close()
		if base+n > portMax {
			continue
		}
		free := true
		for p := base; p < base+n && free; p++ {
			l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", p))
			if err != nil {
				free = false
				continue
			}
			l.Close()
		}
		if free {
			return base
		}
	}
	t.Fatal("no range of free ports found")
	return 0
}

// lockedBuffer collects a process's output from exec's goroutine.
type lockedBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func lastLines(s string, n int) string {
	lines := strings.Split(s, "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
