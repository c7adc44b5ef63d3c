package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"sluice/jepsen/bench"
)

// buildTimeout bounds building the sluice binary.
const buildTimeout = 5 * time.Minute

// pageCacheFlushMessages is Kafka's own default for
// log.flush.interval.messages (Long.MAX_VALUE): acknowledge from the page
// cache, leave fsync to the operating system.
const pageCacheFlushMessages = "9223372036854775807"

// sluiceBuild is the one build of the sluice binary per harness run.
type sluiceBuild struct {
	once     sync.Once
	path     string
	err      error
	prebuilt string
}

// sluice returns the path of the sluice binary: --sluice-binary, or one
// built from the main module into the harness's work directory.
func (h *harness) sluice() (string, error) {
	h.build.once.Do(func() {
		if h.build.prebuilt != "" {
			h.build.path, h.build.err = filepath.Abs(h.build.prebuilt)
			return
		}
		root, err := sluiceModuleRoot()
		if err != nil {
			h.build.err = err
			return
		}
		path := filepath.Join(h.workDir, "sluice")
		ctx, cancel := context.WithTimeout(context.Background(), buildTimeout)
		defer cancel()
		command := exec.CommandContext(ctx, "go", "build", "-o", path, "./cmd/sluice")
		command.Dir = root
		if output, err := command.CombinedOutput(); err != nil {
			h.build.err = fmt.Errorf("go build ./cmd/sluice in %s: %v: %s", root, err, strings.Join(strings.Fields(string(output)), " "))
			return
		}
		h.build.path = path
	})
	return h.build.path, h.build.err
}

// sluiceModuleRoot is the nearest directory at or above the working
// directory whose go.mod declares `module sluice`: this module lives in
// its cmd/bench-peers.
func sluiceModuleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if data, err := os.ReadFile(filepath.Join(dir, "go.mod")); err == nil {
			for _, line := range strings.Split(string(data), "\n") {
				if strings.TrimSpace(line) == "module sluice" {
					return dir, nil
				}
			}
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod declaring module sluice in the working directory or above it; pass --sluice-binary")
		}
		dir = parent
	}
}

// startSluiceSingle runs `sluice broker` on a free port; pageCache
// relaxes flush.messages to Kafka's default.
func startSluiceSingle(pageCache bool) func(context.Context, *harness, string) (*target, error) {
	return func(ctx context.Context, h *harness, dir string) (*target, error) {
		binary, err := h.sluice()
		if err != nil {
			return nil, err
		}
		port, err := freePort()
		if err != nil {
			return nil, err
		}
		address := "127.0.0.1:" + strconv.Itoa(port)
		args := []string{"broker", "--node-id", "1", "--listen", address, "--data", filepath.Join(dir, "data"), "--log-level", "warn"}
		if pageCache {
			args = append(args, "--set", "log.flush.interval.messages="+pageCacheFlushMessages)
		}
		node, err := startChild("sluice broker", filepath.Join(dir, "sluice.log"), binary, args...)
		if err != nil {
			return nil, err
		}
		return &target{
			children:  []*child{node},
			connector: &kafkaConnector{h: h, brokers: []string{address}, replicationFactor: 1, children: []*child{node}},
		}, nil
	}
}

// startSluiceCluster runs `sluice cluster --nodes 3`: three child
// processes, each broker and controller; topics get replication factor 3.
func startSluiceCluster(ctx context.Context, h *harness, dir string) (*target, error) {
	binary, err := h.sluice()
	if err != nil {
		return nil, err
	}
	const nodes = 3
	base, err := freePortRange(2 * nodes)
	if err != nil {
		return nil, err
	}
	cluster, err := startChild("sluice cluster", filepath.Join(dir, "sluice-cluster.log"), binary,
		"cluster", "--nodes", strconv.Itoa(nodes), "--port", strconv.Itoa(base), "--data", filepath.Join(dir, "cluster"), "--log-level", "warn")
	if err != nil {
		return nil, err
	}
	var brokers []string
	for i := range nodes {
		brokers = append(brokers, "127.0.0.1:"+strconv.Itoa(base+i))
	}
	return &target{
		children:  []*child{cluster},
		connector: &kafkaConnector{h: h, brokers: brokers, replicationFactor: nodes, children: []*child{cluster}},
	}, nil
}

// kafkaConnector drives a Kafka-compatible system (Sluice, kfake) with
// the same kgo settings for all: acks=all (idempotent), no compression,
// no linger, unkeyed records, pendingMax buffered records per client.
type kafkaConnector struct {
	h                 *harness
	brokers           []string
	replicationFactor int16
	children          []*child
}

func (k *kafkaConnector) options(topic string) bench.KafkaOptions {
	return bench.KafkaOptions{
		Brokers:           k.brokers,
		Topic:             topic,
		Partitions:        int32(k.h.settings.partitions),
		ReplicationFactor: k.replicationFactor,
		Acks:              "all",
		Compression:       "none",
		PendingMax:        k.h.settings.pendingMax,
	}
}

func (k *kafkaConnector) prepare(ctx context.Context, topic string) error {
	ctx, cancel := whileAlive(ctx, k.children...)
	defer cancel()
	err := bench.EnsureTopic(ctx, k.options(topic))
	if cause := context.Cause(ctx); err != nil && cause != nil && !errors.Is(cause, context.Canceled) {
		return cause
	}
	return err
}

func (k *kafkaConnector) senders(topic string, count int) ([]bench.Sender, error) {
	var senders []bench.Sender
	for range count {
		s, err := bench.NewKafkaSender(k.options(topic))
		if err != nil {
			closeAll(senders)
			return nil, err
		}
		senders = append(senders, s)
	}
	return senders, nil
}

func (k *kafkaConnector) receiver(_ context.Context, topic string, fromEnd bool) (bench.Receiver, error) {
	return bench.NewKafkaReceiver(k.options(topic), fromEnd)
}

func closeAll(senders []bench.Sender) {
	for _, s := range senders {
		s.Close()
	}
}
