package controller

import (
	"errors"
	"fmt"

	"github.com/twmb/franz-go/pkg/kerr"
)

// failure is why the controller refused one item of a request (a topic, a
// partition, a config resource): the Kafka error the answer carries, and a
// sentence for the person reading it (the answers' ErrorMessage fields).
type failure struct {
	code    *kerr.Error
	message string
}

func fail(code *kerr.Error, format string, args ...any) *failure {
	return &failure{code: code, message: fmt.Sprintf(format, args...)}
}

// messagePointer is the failure's message as an answer's nullable
// ErrorMessage: nil for success.
func (f *failure) messagePointer() *string {
	if f == nil {
		return nil
	}
	message := f.message
	return &message
}

// errorCode is the failure's Kafka error code, 0 for success.
func (f *failure) errorCode() int16 {
	if f == nil {
		return 0
	}
	return f.code.Code
}

// queueFull answers a request that found the operation queue full. The
// request changed nothing, and a client may retry it later.
func queueFull() *failure {
	return fail(kerr.RequestTimedOut, "the controller has %d operations waiting; try again later", operationsQueuedMax)
}

// notController answers a request that reached a controller which is not
// the active one, or not yet ready to act. Clients and brokers look for the
// active controller again and retry (the error is retriable).
func notController() *failure {
	return fail(kerr.NotController, "this controller is not the active one; retry with the current quorum leader")
}

// proposalFailed turns a failed commit into the answer for every item the
// operation would have changed. A Kafka error passes through. Anything else
// means the outcome is not known in general: a Raft leader may lose its
// leadership after appending, and the records can still commit under the
// next leader. REQUEST_TIMED_OUT says exactly that to a client: retry, and
// look (a retried CreateTopics may then find TOPIC_ALREADY_EXISTS).
func proposalFailed(err error) *failure {
	var kafkaError *kerr.Error
	if errors.As(err, &kafkaError) {
		return &failure{code: kafkaError, message: err.Error()}
	}
	return fail(kerr.RequestTimedOut, "the metadata change was not committed: %v", err)
}
