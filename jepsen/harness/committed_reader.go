package harness

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"sluice/jepsen/history"
)

// committedReader reads the group's committed offsets now and then
// (OffsetFetch), as fetch-committed ops: the reads that let porcupine
// judge each committed offset as a register.
type committedReader struct {
	client     *kgo.Client
	log        *historyLog
	group      string
	topic      string
	partitions int32
	running    sync.WaitGroup
}

func newCommittedReader(cluster *Cluster, log *historyLog, group, topic string, partitions int32) (*committedReader, error) {
	client, err := kgo.NewClient(cluster.ClientOptions()...)
	if err != nil {
		return nil, fmt.Errorf("harness: committed-offset reader: %w", err)
	}
	return &committedReader{client: client, log: log, group: group, topic: topic, partitions: partitions}, nil
}

func (r *committedReader) start(ctx context.Context, failed func(error)) {
	r.running.Add(1)
	go func() {
		defer r.running.Done()
		if err := r.run(ctx); err != nil {
			failed(err)
		}
	}()
}

func (r *committedReader) run(ctx context.Context) error {
	admin := kadm.NewClient(r.client)
	process := r.log.newProcess()
	ticker := time.NewTicker(committedReadInterval)
	defer ticker.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-ticker.C:
		}
		var asked []history.Commit
		for partition := range r.partitions {
			asked = append(asked, history.Commit{Group: r.group, Partition: history.TopicPartition{Topic: r.topic, Partition: partition}, Offset: history.OffsetUnknown})
		}
		op, err := r.log.invoke(process, history.FuncFetchCommitted, history.Payload{Commits: asked})
		if err != nil {
			return err
		}
		readContext, cancel := context.WithTimeout(context.WithoutCancel(ctx), committedReadTimeout)
		fetched, err := admin.FetchOffsets(readContext, r.group)
		cancel()
		if err == nil {
			err = fetched.Error()
		}
		if err != nil {
			// A read changes nothing: whatever went wrong, it did not
			// happen.
			op.fail(err.Error())
			continue
		}
		read := make([]history.Commit, len(asked))
		for i, commit := range asked {
			read[i] = commit
			if offset, ok := fetched.Lookup(r.topic, commit.Partition.Partition); ok && offset.At >= 0 {
				read[i].Offset = offset.At
			}
		}
		op.ok(history.Payload{Commits: read})
	}
}

func (r *committedReader) stop() {
	r.running.Wait()
	r.client.Close()
}
