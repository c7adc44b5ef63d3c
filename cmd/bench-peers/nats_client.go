package main

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"sluice/jepsen/bench"
)

// NATS client settings. Producing uses JetStream's fast path, async
// publish with a bounded number of pending acknowledgements; consuming
// uses a pull consumer that fetches batches ahead (Consumer.Messages),
// acknowledging nothing, as a Kafka consumer without a group does.
const (
	// natsStallWait is one step of waiting for a free pending slot.
	natsStallWait = time.Second
	// natsAckTimeout fails a publish whose acknowledgement never came.
	natsAckTimeout = bench.FlushTimeout
	// natsPullBytes is how many bytes a pull consumer buffers ahead:
	// kgo's default per-partition fetch size.
	natsPullBytes = 1 << 20
	// streamReadyPoll spaces attempts to create a stream on a cluster
	// that is still electing its meta leader.
	streamReadyPoll = 200 * time.Millisecond
	// streamAttemptTimeout bounds one attempt to create a stream.
	streamAttemptTimeout = 5 * time.Second
)

// natsConnector maps a topic of P partitions to P streams named
// TOPIC-i, each with the one subject TOPIC.i.
type natsConnector struct {
	h        *harness
	urls     []string
	replicas int
	children []*child
}

func streamName(topic string, index int) string { return topic + "-" + strconv.Itoa(index) }
func subject(topic string, index int) string    { return topic + "." + strconv.Itoa(index) }

func (n *natsConnector) connect() (*nats.Conn, error) {
	return nats.Connect(strings.Join(n.urls, ","), nats.Name("bench-peers"))
}

func (n *natsConnector) prepare(ctx context.Context, topic string) error {
	ctx, cancel := whileAlive(ctx, n.children...)
	defer cancel()
	conn, err := n.connect()
	if err != nil {
		return err
	}
	defer conn.Close()
	js, err := jetstream.New(conn)
	if err != nil {
		return err
	}
	for i := range n.h.settings.partitions {
		config := jetstream.StreamConfig{
			Name:     streamName(topic, i),
			Subjects: []string{subject(topic, i)},
			Storage:  jetstream.FileStorage,
			Replicas: n.replicas,
		}
		var lastError error
		for {
			// Each attempt has its own short deadline: a request sent
			// before the cluster has a meta leader may get no answer at
			// all, and must not use up the whole set-up time.
			attempt, cancel := context.WithTimeout(ctx, streamAttemptTimeout)
			_, err = js.CreateOrUpdateStream(attempt, config)
			cancel()
			if err == nil {
				break
			}
			if ctx.Err() == nil {
				lastError = err
			}
			select {
			case <-ctx.Done():
				if cause := context.Cause(ctx); cause != nil && !errors.Is(cause, context.DeadlineExceeded) {
					return cause
				}
				return fmt.Errorf("creating stream %s: %w (last error: %v)", config.Name, ctx.Err(), lastError)
			case <-time.After(streamReadyPoll):
			}
		}
	}
	return nil
}

func (n *natsConnector) senders(topic string, count int) ([]bench.Sender, error) {
	var senders []bench.Sender
	for range count {
		s, err := n.newSender(topic)
		if err != nil {
			closeAll(senders)
			return nil, err
		}
		senders = append(senders, s)
	}
	return senders, nil
}

// natsSender is one connection publishing asynchronously. JetStream
// reports each acknowledgement to one handler with the message it
// answers, so the sender keeps each message's done callback by pointer.
type natsSender struct {
	conn     *nats.Conn
	js       jetstream.JetStream
	subjects []string
	mutex    sync.Mutex
	pending  map[*nats.Msg]func(error)
}

func (n *natsConnector) newSender(topic string) (*natsSender, error) {
	conn, err := n.connect()
	if err != nil {
		return nil, err
	}
	s := &natsSender{conn: conn, pending: map[*nats.Msg]func(error){}}
	for i := range n.h.settings.partitions {
		s.subjects = append(s.subjects, subject(topic, i))
	}
	s.js, err = jetstream.New(conn,
		jetstream.WithPublishAsyncMaxPending(n.h.settings.pendingMax),
		jetstream.WithPublishAsyncTimeout(natsAckTimeout),
		jetstream.WithPublishAsyncAckHandler(func(_ jetstream.JetStream, msg *nats.Msg, _ *jetstream.PubAck) { s.complete(msg, nil) }),
		jetstream.WithPublishAsyncErrHandler(func(_ jetstream.JetStream, msg *nats.Msg, err error) { s.complete(msg, err) }),
	)
	if err != nil {
		conn.Close()
		return nil, err
	}
	return s, nil
}

func (s *natsSender) complete(msg *nats.Msg, err error) {
	s.mutex.Lock()
	done, ok := s.pending[msg]
	delete(s.pending, msg)
	s.mutex.Unlock()
	if ok {
		done(err)
	}
}

// Send publishes asynchronously. While the pending bound is reached it
// waits in steps of natsStallWait, so that back-pressure blocks as long as
// the system needs but gives up soon after ctx ends.
func (s *natsSender) Send(ctx context.Context, sequence int64, value []byte, done func(error)) {
	msg := &nats.Msg{Subject: s.subjects[sequence%int64(len(s.subjects))], Data: value}
	s.mutex.Lock()
	s.pending[msg] = done
	s.mutex.Unlock()
	for {
		_, err := s.js.PublishMsgAsync(msg, jetstream.WithStallWait(natsStallWait))
		if errors.Is(err, jetstream.ErrTooManyStalledMsgs) && ctx.Err() == nil {
			continue
		}
		if err != nil {
			s.complete(msg, err)
		}
		return
	}
}

func (s *natsSender) Flush(ctx context.Context) error {
	select {
	case <-s.js.PublishAsyncComplete():
		return nil
	case <-ctx.Done():
		return fmt.Errorf("%d publishes still pending: %w", s.js.PublishAsyncPending(), ctx.Err())
	}
}

func (s *natsSender) Close() { s.conn.Close() }

// natsReceiver has one ephemeral pull consumer per stream.
type natsReceiver struct {
	conn      *nats.Conn
	consumers []jetstream.Consumer
}

func (n *natsConnector) receiver(ctx context.Context, topic string, fromEnd bool) (bench.Receiver, error) {
	conn, err := n.connect()
	if err != nil {
		return nil, err
	}
	js, err := jetstream.New(conn)
	if err != nil {
		conn.Close()
		return nil, err
	}
	r := &natsReceiver{conn: conn}
	deliver := jetstream.DeliverAllPolicy
	if fromEnd {
		deliver = jetstream.DeliverNewPolicy
	}
	for i := range n.h.settings.partitions {
		consumer, err := js.CreateConsumer(ctx, streamName(topic, i), jetstream.ConsumerConfig{
			AckPolicy:     jetstream.AckNonePolicy,
			DeliverPolicy: deliver,
		})
		if err != nil {
			conn.Close()
			return nil, fmt.Errorf("consumer on stream %s: %w", streamName(topic, i), err)
		}
		r.consumers = append(r.consumers, consumer)
	}
	return r, nil
}

func (r *natsReceiver) Receive(ctx context.Context, deliver func([]byte)) error {
	errs := make(chan error, len(r.consumers))
	for _, consumer := range r.consumers {
		go func() { errs <- receiveStream(ctx, consumer, deliver) }()
	}
	var first error
	for range r.consumers {
		if err := <-errs; err != nil && first == nil {
			first = err
		}
	}
	return first
}

func receiveStream(ctx context.Context, consumer jetstream.Consumer, deliver func([]byte)) error {
	messages, err := consumer.Messages(jetstream.PullMaxBytes(natsPullBytes))
	if err != nil {
		return err
	}
	stop := context.AfterFunc(ctx, messages.Stop)
	defer stop()
	for {
		msg, err := messages.Next()
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
		deliver(msg.Data())
	}
}

func (r *natsReceiver) Close() { r.conn.Close() }
