package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"math"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"sluice/node"
)

func init() {
	register("broker", "run a node (defaults: a single node 1 on 127.0.0.1:9092, data in ./data)", runBroker)
}

// settings collects repeated --set key=value flags.
type settings []string

func (s *settings) String() string     { return strings.Join(*s, ",") }
func (s *settings) Set(v string) error { *s = append(*s, v); return nil }

func runBroker(args []string) int {
	config := node.DefaultConfig()
	flags := flag.NewFlagSet("broker", flag.ContinueOnError)
	nodeID := flags.Int("node-id", int(config.Broker.NodeID), "this node's id (Kafka's node.id)")
	listen := flags.String("listen", config.Listen, "client listener address host:port")
	advertised := flags.String("advertised", "", "address clients are told to use (default: --listen)")
	dataDir := flags.String("data", config.DataDir, "data directory")
	controllerListen := flags.String("controller-listen", "", "controller listener address host:port, where the other nodes reach this one")
	controllers := flags.String("controllers", "", "the quorum's voters id@host:port,... (Kafka's controller.quorum.voters); absent: a single node")
	processRoles := flags.String("process-roles", "broker,controller", "broker, controller, or both (Kafka's process.roles)")
	configFile := flags.String("config", "", "Kafka-style properties file (node.id, listeners, log.dirs, log.retention.ms, ...)")
	logLevel := flags.String("log-level", "info", "debug, info, warn or error")
	profileAddress := flags.String("pprof", "", "serve Go's CPU, allocation, mutex and block profiles on this host:port (net/http/pprof; bind it to loopback)")
	var overrides settings
	flags.Var(&overrides, "set", "a Kafka broker setting key=value (repeatable), e.g. --set log.retention.ms=3600000")
	positional, err := parseAnyOrder(flags, args)
	if err != nil {
		return 2
	}
	if !noPositional("broker", positional) {
		return 2
	}
	if *configFile != "" {
		if err := config.LoadProperties(*configFile); err != nil {
			fmt.Fprintln(os.Stderr, "sluice broker:", err)
			return 2
		}
	}
	// Flags given explicitly win over the file; the defaults are already
	// in config.
	flags.Visit(func(f *flag.Flag) {
		switch f.Name {
		case "node-id":
			config.Broker.NodeID = int32(*nodeID)
		case "listen":
			config.Listen = *listen
		case "advertised":
			config.Advertised = *advertised
		case "data":
			config.DataDir = *dataDir
		case "controller-listen":
			config.ControllerListen = *controllerListen
		}
	})
	flagErrors := 0
	flags.Visit(func(f *flag.Flag) {
		var err error
		switch f.Name {
		case "node-id":
			if *nodeID < 0 || *nodeID > math.MaxInt32 {
				err = fmt.Errorf("%d is not a node id (0 to %d)", *nodeID, math.MaxInt32)
			}
		case "controllers":
			config.Broker.Voters, err = node.ParseVoters(*controllers)
		case "process-roles":
			config.Broker.Roles, err = node.ParseRoles(*processRoles)
		}
		if err != nil {
			fmt.Fprintf(os.Stderr, "sluice broker: --%s: %v\n", f.Name, err)
			flagErrors++
		}
	})
	if flagErrors > 0 {
		return 2
	}
	for _, setting := range overrides {
		key, value, ok := strings.Cut(setting, "=")
		if !ok {
			fmt.Fprintf(os.Stderr, "sluice broker: --set %q: expected key=value\n", setting)
			return 2
		}
		if err := config.Set(key, value); err != nil {
			fmt.Fprintln(os.Stderr, "sluice broker:", err)
			return 2
		}
	}
	if err := config.LogLevel.UnmarshalText([]byte(*logLevel)); err != nil {
		fmt.Fprintf(os.Stderr, "sluice broker: --log-level %q: %v\n", *logLevel, err)
		return 2
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: config.LogLevel}))
	if *profileAddress != "" {
		if err := startProfiling(*profileAddress, log); err != nil {
			fmt.Fprintln(os.Stderr, "sluice broker:", err)
			return 2
		}
	}

	b := thisBuild()
	log.Info("sluice starting", "version", b.version, "revision", b.revisionText(), "go", b.goVersion)
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	if err := node.Run(ctx, config, log); err != nil {
		log.Error("broker failed", "error", err)
		return 1
	}
	return 0
}
