package clusterworkload

import (
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"sluice/jepsen/history"
	"sluice/sim/scenario"
	"sluice/sim/simclient"
)

// offsetReaderDriver is a lag monitor outside a group (scenario.Group's
// OffsetReaders): now and then it reads every committed offset of the
// group with OffsetFetch, recorded as a fetch-committed op, the reads the
// committed-offset linearizability check judges commits against.
//
// It asks the coordinator it last found until that one fails a request,
// as a Kafka client caches a coordinator: a coordinator cut off from its
// peers but not from its clients keeps being asked, which is how a stale
// answer from a replaced coordinator reaches the history. The group's
// members find their coordinator afresh after every failed commit and
// read back only their own partitions, so without a monitor such a read
// is rare.
type offsetReaderDriver struct {
	name       string
	group      string
	topic      string
	client     *simclient.Client
	partitions []history.TopicPartition
	// coordinator is the coordinator's "host:port", "" when unknown.
	coordinator string
	process     int
	// op is the fetch-committed in flight, nil when none.
	op *history.Pending
	// reads counts the fetch-committed ops, readsOK those answered.
	reads, readsOK int
}

// offsetReadInterval is how long a monitor waits between two reads, and
// after a failed one. A read per second is what the black-box harness's
// committed-offset reader does; more reads pin down more unknown commits,
// and the committed-offset search doubles with each (check.go).
const offsetReadInterval = time.Second

// startOffsetReaders builds a group's monitors and sets them going.
func (r *run) startOffsetReaders(gs scenario.Group) {
	for i := 1; i <= gs.OffsetReaders; i++ {
		name := gs.OffsetReaderName(i)
		d := &offsetReaderDriver{name: name, group: gs.Name, topic: gs.Topic, client: r.newClient(name), process: r.processes.Next()}
		for _, p := range r.scenario.PartitionsOf(gs.Topic, nil) {
			d.partitions = append(d.partitions, history.TopicPartition{Topic: gs.Topic, Partition: p})
		}
		d.client.OnCrash(func() { d.crashed() })
		d.client.OnRestart(func() { r.scheduleOffsetRead(d) })
		r.offsetReaders = append(r.offsetReaders, d)
		r.clients = append(r.clients, d.client)
		r.scheduleOffsetRead(d)
	}
}

// crashed fails the read in flight (a read changes nothing, so it did not
// happen) and forgets the coordinator with the rest of the process.
func (d *offsetReaderDriver) crashed() {
	if d.op != nil {
		d.op.Fail("client crashed with the read in flight")
		d.op = nil
	}
	d.coordinator = ""
}

// scheduleOffsetRead runs the monitor's next step after the interval,
// until the liveness phase stops the clients' new work.
func (r *run) scheduleOffsetRead(d *offsetReaderDriver) {
	d.client.After(offsetReadInterval, "workload.offset-read", func() { r.offsetReadStep(d) })
}

// offsetReadStep finds the coordinator when it is unknown, and reads the
// committed offsets from it when it is known.
func (r *run) offsetReadStep(d *offsetReaderDriver) {
	if r.stopSending || !d.client.Alive() {
		return
	}
	if d.coordinator == "" {
		r.findOffsetCoordinator(d)
		return
	}
	r.readOffsets(d)
}

func (r *run) findOffsetCoordinator(d *offsetReaderDriver) {
	req := kmsg.NewPtrFindCoordinatorRequest()
	req.CoordinatorType = 0 // a group
	req.CoordinatorKeys = []string{d.group}
	d.client.RequestAny(req, func(resp kmsg.Response, err error) {
		if err == nil {
			answer := resp.(*kmsg.FindCoordinatorResponse)
			switch {
			case len(answer.Coordinators) != 1:
				err = fmt.Errorf("FindCoordinator answered %d keys for one", len(answer.Coordinators))
			case answer.Coordinators[0].ErrorCode != 0:
				err = kerr.ErrorForCode(answer.Coordinators[0].ErrorCode)
			default:
				found := answer.Coordinators[0]
				d.coordinator = fmt.Sprintf("%s:%d", found.Host, found.Port)
				r.kernel.Trace().Note(r.kernel.Now(), d.name, fmt.Sprintf("group %s coordinator is %s", d.group, d.coordinator))
				r.offsetReadStep(d)
				return
			}
		}
		r.kernel.Trace().Note(r.kernel.Now(), d.name, fmt.Sprintf("FindCoordinator for %s failed: %v", d.group, err))
		r.scheduleOffsetRead(d)
	})
}

// readOffsets sends one OffsetFetch for every partition of the group's
// topic to the cached coordinator and records it. Any failure forgets the
// coordinator, to be found again.
func (r *run) readOffsets(d *offsetReaderDriver) {
	var asked []history.Commit
	req := kmsg.NewPtrOffsetFetchRequest()
	group := kmsg.NewOffsetFetchRequestGroup()
	group.Group = d.group
	for _, tp := range d.partitions {
		asked = append(asked, history.Commit{Group: d.group, Partition: tp, Offset: history.OffsetUnknown})
		if n := len(group.Topics); n == 0 || group.Topics[n-1].Topic != tp.Topic {
			topic := kmsg.NewOffsetFetchRequestGroupTopic()
			topic.Topic = tp.Topic
			group.Topics = append(group.Topics, topic)
		}
		topic := &group.Topics[len(group.Topics)-1]
		topic.Partitions = append(topic.Partitions, tp.Partition)
	}
	req.Groups = append(req.Groups, group)
	op, err := r.recorder.Invoke(d.process, history.FuncFetchCommitted, history.Payload{Commits: asked})
	if err != nil {
		panic(fmt.Sprintf("clusterworkload: %s cannot record a fetch-committed: %v", d.name, err))
	}
	d.op = op
	d.reads++
	d.client.RequestAddress(d.coordinator, req, func(resp kmsg.Response, err error) {
		d.op = nil
		var read []history.Commit
		if err == nil {
			read, err = readOffsetFetch(resp.(*kmsg.OffsetFetchResponse), asked)
		}
		if err != nil {
			op.Fail(err.Error())
			r.kernel.Trace().Note(r.kernel.Now(), d.name, fmt.Sprintf("OffsetFetch from %s failed: %v", d.coordinator, err))
			d.coordinator = ""
		} else {
			d.readsOK++
			op.OK(history.Payload{Commits: read})
		}
		r.scheduleOffsetRead(d)
	})
}

// readOffsetFetch reads an OffsetFetch answer for the partitions asked:
// their committed offsets in the order asked (OffsetUnknown where there
// is none), or the error that stopped the read.
func readOffsetFetch(resp *kmsg.OffsetFetchResponse, asked []history.Commit) ([]history.Commit, error) {
	if len(resp.Groups) != 1 {
		return nil, fmt.Errorf("OffsetFetch answered %d groups for one", len(resp.Groups))
	}
	group := resp.Groups[0]
	if group.ErrorCode != 0 {
		return nil, kerr.ErrorForCode(group.ErrorCode)
	}
	read := make([]history.Commit, 0, len(asked))
	for _, want := range asked {
		offset, found := int64(0), false
		for _, t := range group.Topics {
			for _, p := range t.Partitions {
				if t.Topic != want.Partition.Topic || p.Partition != want.Partition.Partition {
					continue
				}
				if p.ErrorCode != 0 {
					return nil, kerr.ErrorForCode(p.ErrorCode)
				}
				offset, found = p.Offset, true
			}
		}
		switch {
		case !found:
			return nil, fmt.Errorf("OffsetFetch answer leaves out %s", want.Partition)
		case offset < history.OffsetUnknown:
			return nil, fmt.Errorf("OffsetFetch answered offset %d for %s", offset, want.Partition)
		}
		read = append(read, history.Commit{Group: want.Group, Partition: want.Partition, Offset: offset})
	}
	return read, nil
}
