package main

import (
	"testing"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/twmb/franz-go/pkg/kfake"
)

// TestNATSRoundTrip drives an in-process JetStream server through the
// NATS connector: async publish acknowledgements map back to their
// records, and the pull consumers read every record.
func TestNATSRoundTrip(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a NATS server")
	}
	s, err := server.NewServer(&server.Options{Host: "127.0.0.1", Port: -1, JetStream: true, StoreDir: t.TempDir(), NoSigs: true, NoLog: true})
	if err != nil {
		t.Fatal(err)
	}
	s.Start()
	defer s.Shutdown()
	if !s.ReadyForConnections(natsReadyTimeout) {
		t.Fatal("NATS server not ready")
	}
	// Two streams, two producers: records alternate between streams.
	h := &harness{settings: settings{partitions: 2, producers: 2, pendingMax: 64}}
	checkRoundTrip(t, &natsConnector{h: h, urls: []string{s.ClientURL()}, replicas: 1}, h.settings)
}

// TestKafkaRoundTripOnKfake drives an in-process kfake cluster through
// the Kafka connector, the one Sluice's rows use.
func TestKafkaRoundTripOnKfake(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a kfake cluster")
	}
	cluster, err := kfake.NewCluster(kfake.NumBrokers(1))
	if err != nil {
		t.Fatal(err)
	}
	defer cluster.Close()
	h := &harness{settings: settings{partitions: 3, producers: 2, pendingMax: 64}}
	checkRoundTrip(t, &kafkaConnector{h: h, brokers: cluster.ListenAddrs(), replicationFactor: 1}, h.settings)
}
