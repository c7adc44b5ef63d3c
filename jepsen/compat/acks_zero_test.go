package compat

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/IBM/sarama"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"sluice/jepsen/harness"
)

const (
	// acksZeroBefore and acksZeroAfter are how many records the
	// fire-and-forget producer writes before the leadership moves and
	// after.
	acksZeroBefore = 20
	acksZeroAfter  = 120
	// acksZeroInterval spaces the writes after the move, so that they
	// span acksZeroAfter × acksZeroInterval of wall time.
	acksZeroInterval = 100 * time.Millisecond
	// acksZeroSettle is how long after the move writes may still be
	// lost: the old leader drops what reaches it before it hangs up,
	// and the client reconnects and learns the new leader (refreshing
	// its metadata at most every kgo.MetadataMinAge; franz-go takes
	// about 5 s whatever that is). Every record sent later must land.
	acksZeroSettle = 8 * time.Second
	// acksZeroReadWait bounds the wait for the last record sent to be
	// readable.
	acksZeroReadWait = 10 * time.Second
)

// TestAcksZeroProducerFollowsALeaderMove: a producer with acks=0 (fire
// and forget: no answer ever comes), franz-go's and sarama's in turn,
// writes to partition 0 while
// the leadership moves to another node by a preferred election, its
// connection to the old leader still open. The old leader refuses the
// next produce with NOT_LEADER_OR_FOLLOWER; with acks=0 it cannot answer,
// so it must close the connection, as Kafka does, for the client to
// notice and find the new leader. A broker that only dropped the records
// would lose every write until the client's next periodic metadata
// refresh (metadata.max.age.ms, 5 minutes). acks=0 promises nothing, but
// records sent a few seconds after the move must be in the log. Sarama
// depends on the hang-up (it never finds the new leader otherwise);
// franz-go finds it either way, a few seconds after its writes start
// failing.
func TestAcksZeroProducerFollowsALeaderMove(t *testing.T) {
	cluster := startCompatCluster(t)
	for _, client := range []struct {
		name string
		open func(t *testing.T, cluster *harness.Cluster, topic string) acksZeroSender
	}{
		{"franz-go", openKgoAcksZero},
		{"sarama", openSaramaAcksZero},
	} {
		t.Run(client.name, func(t *testing.T) {
			runAcksZeroLeaderMove(t, cluster, "fire-and-forget-"+client.name, client.open)
		})
	}
}

// acksZeroSender is one client's producer with acks=0, writing to
// partition 0: send returns once the record is on its way (no answer
// ever comes), having logged any error the client itself reports.
type acksZeroSender interface {
	send(t *testing.T, value string)
	close()
}

func runAcksZeroLeaderMove(t *testing.T, cluster *harness.Cluster, topic string, open func(t *testing.T, cluster *harness.Cluster, topic string) acksZeroSender) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*failoverWaitMax)
	defer cancel()
	client, err := kgo.NewClient(cluster.ClientOptions()...)
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	admin := kadm.NewClient(client)
	createAssigned(ctx, t, cluster, client, topic, []int32{1, 2, 3})
	waitFor(ctx, t, cluster, "node 1 leading a full ISR", func() bool {
		p := runbookPartition(t, cluster, topic)
		return p.Leader == 1 && len(p.ISR) == 3
	})

	producer := open(t, cluster, topic)
	defer producer.close()
	var sentBefore []string
	for i := range acksZeroBefore {
		sentBefore = append(sentBefore, fmt.Sprintf("before-%d", i))
		producer.send(t, sentBefore[i])
	}

	moves, err := admin.AlterPartitionAssignments(ctx, kadm.AlterPartitionAssignmentsReq{topic: {0: {2, 1, 3}}})
	if err != nil {
		t.Fatal(err)
	}
	if err := moves.Error(); err != nil {
		t.Fatalf("reordering the replicas: %v", err)
	}
	set := kadm.TopicsSet{}
	set.Add(topic, 0)
	waitFor(ctx, t, cluster, "node 2 elected, the preferred replica now", func() bool {
		if runbookPartition(t, cluster, topic).Leader == 2 {
			return true
		}
		_, _ = admin.ElectLeaders(ctx, kadm.ElectPreferredReplica, set)
		return false
	})
	moved := time.Now()

	var mustLand []string
	for i := range acksZeroAfter {
		value := fmt.Sprintf("after-%d", i)
		if time.Since(moved) >= acksZeroSettle {
			mustLand = append(mustLand, value)
		}
		producer.send(t, value)
		time.Sleep(acksZeroInterval)
	}
	if len(mustLand) == 0 {
		t.Fatalf("no record was sent %v after the move", acksZeroSettle)
	}
	// acks=0 gives no answer to wait for: the log is judged once the
	// last record sent is in it, or after acksZeroReadWait.
	var read []string
	for deadline := time.Now().Add(acksZeroReadWait); ; time.Sleep(100 * time.Millisecond) {
		read = readAllValues(ctx, t, cluster, admin, topic)
		if slices.Contains(read, mustLand[len(mustLand)-1]) || time.Now().After(deadline) {
			break
		}
	}
	var missing []string
	for _, value := range mustLand {
		if !slices.Contains(read, value) {
			missing = append(missing, value)
		}
	}
	if len(missing) > 0 {
		t.Fatalf("%d of the %d records sent %v or more after the move are not in the log: %v", len(missing), len(mustLand), acksZeroSettle, missing)
	}
	for i, value := range read {
		if i > 0 && value == read[i-1] {
			t.Fatalf("%s read twice in a row", value)
		}
	}
	t.Logf("%d sent before the move (%d read back), %d after, %d of them %v or more after: all read", acksZeroBefore,
		len(slices.DeleteFunc(slices.Clone(read), func(v string) bool { return !slices.Contains(sentBefore, v) })), acksZeroAfter, len(mustLand), acksZeroSettle)
}

type kgoAcksZero struct{ client *kgo.Client }

func openKgoAcksZero(t *testing.T, cluster *harness.Cluster, topic string) acksZeroSender {
	client, err := kgo.NewClient(cluster.ClientOptions(
		kgo.DefaultProduceTopic(topic),
		kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.RequiredAcks(kgo.NoAck()),
		kgo.DisableIdempotentWrite(),
		// A metadata refresh the client asks for waits at least this
		// long after the last (5 s by default): short, so the test
		// is quick.
		kgo.MetadataMinAge(250*time.Millisecond),
	)...)
	if err != nil {
		t.Fatal(err)
	}
	return &kgoAcksZero{client: client}
}

func (s *kgoAcksZero) send(t *testing.T, value string) {
	// With acks=0, ProduceSync returns once the record is written to
	// the connection.
	if err := s.client.ProduceSync(context.Background(), &kgo.Record{Partition: 0, Value: []byte(value)}).FirstErr(); err != nil {
		t.Logf("franz-go producing %s: %v", value, err)
	}
}

func (s *kgoAcksZero) close() { s.client.Close() }

type saramaAcksZero struct {
	producer sarama.SyncProducer
	topic    string
}

func openSaramaAcksZero(t *testing.T, cluster *harness.Cluster, topic string) acksZeroSender {
	config := saramaConfig(sarama.CompressionNone)
	config.Producer.Idempotent = false
	config.Producer.RequiredAcks = sarama.NoResponse
	config.Producer.Partitioner = sarama.NewManualPartitioner
	config.Metadata.Retry.Backoff = 100 * time.Millisecond
	producer, err := sarama.NewSyncProducer(cluster.Bootstrap(), config)
	if err != nil {
		t.Fatal(err)
	}
	return &saramaAcksZero{producer: producer, topic: topic}
}

func (s *saramaAcksZero) send(t *testing.T, value string) {
	if _, _, err := s.producer.SendMessage(&sarama.ProducerMessage{Topic: s.topic, Partition: 0, Value: sarama.StringEncoder(value)}); err != nil {
		t.Logf("sarama producing %s: %v", value, err)
	}
}

func (s *saramaAcksZero) close() { _ = s.producer.Close() }

// readAllValues reads partition 0 of topic from its start to its end
// offset now and returns the values, in offset order.
func readAllValues(ctx context.Context, t *testing.T, cluster *harness.Cluster, admin *kadm.Client, topic string) []string {
	t.Helper()
	offsets, err := admin.ListEndOffsets(ctx, topic)
	if err != nil {
		return nil
	}
	end, ok := offsets.Lookup(topic, 0)
	if !ok || end.Err != nil || end.Offset == 0 {
		return nil
	}
	var values []string
	for _, r := range readPartition(ctx, t, cluster, topic, int(end.Offset)) {
		values = append(values, string(r.Value))
	}
	return values
}
