package controller

import (
	"math"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"sluice/core/metadata"
)

// AllocateProducerIDs answers AllocateProducerIds (KIP-730): it hands a
// broker the next block of producerIDBlockSize producer ids, recorded in
// the metadata log so that no two brokers, and no broker before and after
// a restart, ever hand out the same id.
//
// Only a registered broker at its current epoch may ask; anything else
// (an old process of a restarted broker, a broker never registered) gets
// STALE_BROKER_EPOCH, as from Kafka.
func (c *Controller) AllocateProducerIDs(req *kmsg.AllocateProducerIDsRequest, done func(*kmsg.AllocateProducerIDsResponse)) {
	answer := func(start int64, f *failure) {
		resp := req.ResponseKind().(*kmsg.AllocateProducerIDsResponse)
		resp.ErrorCode = f.errorCode()
		if f == nil {
			resp.ProducerIDStart, resp.ProducerIDLen = start, producerIDBlockSize
		} else {
			c.log.Warn("producer id block refused", "broker", req.BrokerID, "error", f.code, "reason", f.message)
		}
		done(resp)
	}
	c.submit(func() ([]metadata.Record, func(*failure)) {
		if _, refused := c.registeredAt(req.BrokerID, req.BrokerEpoch); refused != nil {
			return nil, func(*failure) { answer(-1, refused) }
		}
		if c.image.NextProducerID > math.MaxInt64-producerIDBlockSize {
			f := fail(kerr.UnknownServerError, "producer ids are exhausted")
			return nil, func(*failure) { answer(-1, f) }
		}
		start := c.image.NextProducerID
		record := metadata.Record{ProducerIDs: &metadata.ProducerIDsRecord{
			BrokerID: req.BrokerID, BrokerEpoch: req.BrokerEpoch, NextProducerID: start + producerIDBlockSize,
		}}
		return []metadata.Record{record}, func(f *failure) { answer(start, f) }
	}, func(f *failure) { answer(-1, f) })
}
