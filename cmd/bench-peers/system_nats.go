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
	"time"

	"github.com/nats-io/nats-server/v2/server"
)

// natsReadyTimeout bounds how long a NATS server may take to accept
// connections.
const natsReadyTimeout = 30 * time.Second

// startNATS runs nats-server with JetStream and file storage, one child
// process per server (this program's serve-nats mode). With servers > 1
// they form a cluster over routes on loopback and streams get that many
// replicas. syncAlways is the `sync_interval: always` setting; otherwise
// the store syncs on its default interval (2 minutes).
func startNATS(servers int, syncAlways bool) func(context.Context, *harness, string) (*target, error) {
	return func(ctx context.Context, h *harness, dir string) (*target, error) {
		clientPorts := make([]int, servers)
		clusterPorts := make([]int, servers)
		for i := range servers {
			var err error
			if clientPorts[i], err = freePort(); err != nil {
				return nil, err
			}
			if clusterPorts[i], err = freePort(); err != nil {
				return nil, err
			}
		}
		var routes []string
		for _, port := range clusterPorts {
			routes = append(routes, "nats-route://127.0.0.1:"+strconv.Itoa(port))
		}
		t := &target{}
		var urls []string
		for i := range servers {
			name := "n" + strconv.Itoa(i+1)
			args := []string{"serve-nats", "--name", name, "--port", strconv.Itoa(clientPorts[i]),
				"--store", filepath.Join(dir, name)}
			if syncAlways {
				args = append(args, "--sync-always")
			}
			if servers > 1 {
				args = append(args, "--cluster-port", strconv.Itoa(clusterPorts[i]), "--routes", strings.Join(routes, ","))
			}
			c, url, err := startServeChild("nats-server "+name, filepath.Join(dir, name+".log"), args...)
			if err != nil {
				t.stop()
				return nil, err
			}
			t.children = append(t.children, c)
			urls = append(urls, url)
		}
		t.connector = &natsConnector{h: h, urls: urls, replicas: servers, children: t.children}
		return t, nil
	}
}

// serveNATS is the serve-nats mode: one embedded nats-server with
// JetStream, printing its client URL once it accepts connections and
// running until SIGTERM.
func serveNATS(args []string) int {
	flags := flag.NewFlagSet("serve-nats", flag.ContinueOnError)
	name := flags.String("name", "n1", "server name")
	port := flags.Int("port", 4222, "client port on 127.0.0.1")
	store := flags.String("store", "", "JetStream store directory")
	syncAlways := flags.Bool("sync-always", false, "sync every write (sync_interval: always)")
	clusterPort := flags.Int("cluster-port", 0, "route port on 127.0.0.1 (0: no cluster)")
	routes := flags.String("routes", "", "route URLs of every cluster member, comma-separated")
	if err := flags.Parse(args); err != nil {
		return 2
	}
	options := &server.Options{
		ServerName: *name,
		Host:       "127.0.0.1",
		Port:       *port,
		JetStream:  true,
		StoreDir:   *store,
		SyncAlways: *syncAlways,
		NoSigs:     true,
	}
	if *clusterPort > 0 {
		options.Cluster = server.ClusterOpts{Name: "bench", Host: "127.0.0.1", Port: *clusterPort}
		options.Routes = server.RoutesFromStr(*routes)
	}
	signals := make(chan os.Signal, 1)
	signal.Notify(signals, syscall.SIGTERM, syscall.SIGINT)
	s, err := server.NewServer(options)
	if err != nil {
		fmt.Fprintln(os.Stderr, "serve-nats:", err)
		return 1
	}
	s.ConfigureLogger() // to stderr: the child's log file
	s.Start()
	if !s.ReadyForConnections(natsReadyTimeout) {
		fmt.Fprintf(os.Stderr, "serve-nats: not ready for connections within %v\n", natsReadyTimeout)
		s.Shutdown()
		return 1
	}
	fmt.Println(readyPrefix + s.ClientURL())
	<-signals
	s.Shutdown()
	s.WaitForShutdown()
	return 0
}
