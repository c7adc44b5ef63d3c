package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/twmb/franz-go/pkg/kfake"
)

// kfakeStorage is how a kfake cluster keeps its data.
type kfakeStorage int

const (
	// kfakeMemory keeps everything in memory (kfake's default).
	kfakeMemory kfakeStorage = iota
	// kfakeDataDir persists to a data directory through the page cache,
	// syncing only on segment roll and shutdown (kfake.DataDir).
	kfakeDataDir
	// kfakeSyncWrites fsyncs every batch (kfake.DataDir + SyncWrites).
	kfakeSyncWrites
)

func (s kfakeStorage) flagValue() string {
	return [...]string{"memory", "dir", "sync"}[s]
}

// startKfake runs franz-go's fake Kafka cluster in a child process (this
// program's serve-kfake mode), so that it does not share a Go runtime
// with the load generator, as no other system does.
func startKfake(brokers int, storage kfakeStorage) func(context.Context, *harness, string) (*target, error) {
	return func(ctx context.Context, h *harness, dir string) (*target, error) {
		c, addresses, err := startServeChild("kfake", filepath.Join(dir, "kfake.log"),
			"serve-kfake", "--brokers", strconv.Itoa(brokers), "--storage", storage.flagValue(), "--dir", filepath.Join(dir, "data"))
		if err != nil {
			return nil, err
		}
		return &target{
			children:  []*child{c},
			connector: &kafkaConnector{h: h, brokers: strings.Split(addresses, ","), replicationFactor: int16(brokers), children: []*child{c}},
		}, nil
	}
}

// serveKfake is the serve-kfake mode: start a kfake cluster, print its
// addresses, run until SIGTERM.
func serveKfake(args []string) int {
	flags := flag.NewFlagSet("serve-kfake", flag.ContinueOnError)
	brokers := flags.Int("brokers", 1, "brokers in the cluster")
	storage := flags.String("storage", "memory", "memory, dir (kfake.DataDir) or sync (DataDir and SyncWrites)")
	dir := flags.String("dir", "", "data directory for dir and sync")
	if err := flags.Parse(args); err != nil {
		return 2
	}
	options := []kfake.Opt{kfake.NumBrokers(*brokers)}
	switch *storage {
	case "memory":
	case "dir":
		options = append(options, kfake.DataDir(*dir))
	case "sync":
		options = append(options, kfake.DataDir(*dir), kfake.SyncWrites())
	default:
		fmt.Fprintf(os.Stderr, "serve-kfake: --storage %q: want memory, dir or sync\n", *storage)
		return 2
	}
	signals := make(chan os.Signal, 1)
	signal.Notify(signals, syscall.SIGTERM, syscall.SIGINT)
	cluster, err := kfake.NewCluster(options...)
	if err != nil {
		fmt.Fprintln(os.Stderr, "serve-kfake:", err)
		return 1
	}
	fmt.Println(readyPrefix + strings.Join(cluster.ListenAddrs(), ","))
	<-signals
	cluster.Close()
	return 0
}
