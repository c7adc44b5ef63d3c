package replica

import (
	"encoding/base64"
	"errors"
	"fmt"
	"testing"
	"time"

	"sluice/core"
	"sluice/core/batch"
	"sluice/core/metadata"
	"sluice/sim"
	"sluice/sim/kernel"
	"sluice/sim/simdisk"
)

// A machine and one replica directory for the partition.metadata tests.
type topicIDFixture struct {
	t       *testing.T
	kernel  *kernel.Kernel
	machine *sim.Machine
}

const topicIDFixtureDir = "orders-0"

func newTopicIDFixture(t *testing.T, faults simdisk.Faults) *topicIDFixture {
	k := kernel.NewKernel(7, nil)
	faults.SyncLatencyMin, faults.SyncLatencyMax = time.Millisecond, 2*time.Millisecond
	return &topicIDFixture{t: t, kernel: k, machine: sim.NewMachine(k, nil, "n1", sim.MachineOptions{Disk: faults})}
}

func (f *topicIDFixture) open(id metadata.TopicID) (*Partition, error) {
	config, err := ConfigFrom(nil, nil)
	if err != nil {
		f.t.Fatal(err)
	}
	return Open(f.machine.World(), topicIDFixtureDir, Identity{Topic: "orders", TopicID: id, NodeID: 1}, config)
}

func (f *topicIDFixture) mustOpen(id metadata.TopicID) *Partition {
	f.t.Helper()
	p, err := f.open(id)
	if err != nil {
		f.t.Fatalf("opening as %s: %v", id, err)
	}
	return p
}

func (f *topicIDFixture) run(d time.Duration) { f.kernel.RunUntil(f.kernel.Now() + int64(d)) }

// lead makes p the sole replica's leader and appends values, one batch
// each, waiting for each to be durable.
func (f *topicIDFixture) lead(p *Partition, values ...string) {
	f.t.Helper()
	p.BecomeLeader(0, 0, []int32{1}, []int32{1}, nil)
	f.run(10 * time.Millisecond)
	for _, v := range values {
		b := batch.Build(batch.Spec{ProducerID: batch.NoProducerID, Records: []batch.Record{{Value: []byte(v)}}})
		if _, err := p.AppendAsLeader(b, false); err != nil {
			f.t.Fatalf("appending %q: %v", v, err)
		}
	}
	f.run(10 * time.Millisecond)
}

func (f *topicIDFixture) fileContent() string {
	f.t.Helper()
	data, err := core.ReadWhole(f.machine.Disk, topicIDFixtureDir+"/"+topicIDFileName, topicIDFileBytesMax)
	if err != nil {
		f.t.Fatalf("reading partition.metadata: %v", err)
	}
	return string(data)
}

var (
	topicA = metadata.TopicID{0xa, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}
	topicB = metadata.TopicID{0xb, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}
)

func TestANewReplicaWritesItsTopicIDBeforeItLeadsOrFetches(t *testing.T) {
	f := newTopicIDFixture(t, simdisk.Faults{})
	p := f.mustOpen(topicA)
	p.BecomeLeader(0, 0, []int32{1, 2}, []int32{1, 2}, nil)
	if p.Recovered() || p.IsLeader() {
		t.Fatal("a new replica leads before its partition.metadata is durable")
	}
	f.run(10 * time.Millisecond)
	if !p.Recovered() || !p.IsLeader() {
		t.Fatal("the replica does not lead once its partition.metadata is durable")
	}
	// Kafka's format: the id in URL-safe base64 without padding.
	if got, want := f.fileContent(), "version: 0\ntopic_id: CgECAwQFBgcICQoLDA0ODw\n"; got != want {
		t.Fatalf("partition.metadata holds %q, want %q", got, want)
	}

	g := newTopicIDFixture(t, simdisk.Faults{})
	follower := g.mustOpen(topicA)
	follower.BecomeFollower(2, 0, 0, []int32{1, 2}, []int32{1, 2})
	if _, ready := follower.FetchPosition(); ready {
		t.Fatal("a new follower fetches before its partition.metadata is durable")
	}
	g.run(10 * time.Millisecond)
	if _, ready := follower.FetchPosition(); !ready {
		t.Fatal("the follower does not fetch once its partition.metadata is durable")
	}
}

func TestOpenRefusesADirectoryOfAnotherTopicID(t *testing.T) {
	f := newTopicIDFixture(t, simdisk.Faults{})
	p := f.mustOpen(topicA)
	f.lead(p, "a0", "a1")
	p.Close()

	_, err := f.open(topicB)
	other, refused := errors.AsType[*OtherTopicIDError](err)
	if !refused || other.Found != topicA || other.Want != topicB || other.Dir != topicIDFixtureDir {
		t.Fatalf("opening topic A's directory as topic B: %v, want an OtherTopicIDError naming A", err)
	}
	// The refusal leaves the directory as it was: removing it is the
	// broker's decision.
	again := f.mustOpen(topicA)
	if again.LogEndOffset() != 2 {
		t.Fatalf("topic A's log ends at %d after the refusal, want 2", again.LogEndOffset())
	}
}

func TestOpenAdoptsADirectoryFromBeforeTheTopicIDFile(t *testing.T) {
	f := newTopicIDFixture(t, simdisk.Faults{})
	p := f.mustOpen(topicA)
	f.lead(p, "old-0", "old-1", "old-2")
	p.Close()
	if err := f.machine.Disk.Remove(topicIDFixtureDir + "/" + topicIDFileName); err != nil {
		t.Fatal(err)
	}

	adopted := f.mustOpen(topicB)
	f.run(10 * time.Millisecond)
	if adopted.LogEndOffset() != 3 || !adopted.Recovered() {
		t.Fatalf("adopted log ends at %d (recovered %v), want its 3 records, recovered", adopted.LogEndOffset(), adopted.Recovered())
	}
	if got := f.fileContent(); got != string(encodeTopicIDFile(topicB)) {
		t.Fatalf("partition.metadata holds %q after adoption, want topic B's", got)
	}
}

// The file carries no checksum, so a bit flipped on its way from the disk
// could name another topic, and the broker would delete the directory.
// Reads that disagree are read again until three in a row agree.
func TestATopicIDReadCorruptedInFlightIsReadAgain(t *testing.T) {
	f := newTopicIDFixture(t, simdisk.Faults{})
	p := f.mustOpen(topicA)
	f.lead(p, "kept")
	p.Close()
	faults := f.machine.Disk.Faults()
	faults.ReadCorruption = 0.4
	f.machine.Disk.SetFaults(faults)
	read, unstable := 0, 0
	for attempt := range 500 {
		id, found, err := readTopicIDFile(f.machine.World(), topicIDFixtureDir)
		switch {
		case errors.Is(err, core.ErrUnstable):
			unstable++ // never three reads alike: the partition stays closed
		case err != nil:
			t.Fatalf("read %d: %v", attempt, err)
		case !found || id != topicA:
			t.Fatalf("read %d: found=%v id %s, want topic A %s", attempt, found, id, topicA)
		default:
			read++
		}
	}
	if read < 450 {
		t.Fatalf("only %d of 500 reads found the id (%d unstable)", read, unstable)
	}
	if f.machine.Disk.Stats().ReadsCorrupted == 0 {
		t.Fatal("no read was corrupted: the test tests nothing")
	}
}

func TestTopicIDFileRoundTrip(t *testing.T) {
	for _, id := range []metadata.TopicID{topicA, topicB, {}} {
		got, err := decodeTopicIDFile(encodeTopicIDFile(id))
		if err != nil || got != id {
			t.Fatalf("round trip of %s: %s, %v", id, got, err)
		}
		// The bytes Kafka's format and earlier versions wrote.
		want := fmt.Sprintf("version: 0\ntopic_id: %s\n", base64.RawURLEncoding.EncodeToString(id[:]))
		if got := string(encodeTopicIDFile(id)); got != want {
			t.Fatalf("encoded %q, want %q", got, want)
		}
	}
	for _, bad := range []string{"", "version: 1\ntopic_id: CgECAwQFBgcICQoLDA0ODw\n", "version: 0\n", "version: 0\ntopic_id: short\n", "version: 0\ntopic: CgECAwQFBgcICQoLDA0ODw\n"} {
		if _, err := decodeTopicIDFile([]byte(bad)); err == nil {
			t.Fatalf("decoding %q: no error", bad)
		}
	}
}
