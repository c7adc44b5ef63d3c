package controller

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// These stubs are being replaced by the real operations (one file each).

func (c *Controller) RegisterBroker(req *kmsg.BrokerRegistrationRequest, done func(*kmsg.BrokerRegistrationResponse)) {
	resp := req.ResponseKind().(*kmsg.BrokerRegistrationResponse)
	resp.ErrorCode = kerr.UnsupportedVersion.Code
	done(resp)
}

func (c *Controller) CreateTopics(req *kmsg.CreateTopicsRequest, done func(*kmsg.CreateTopicsResponse)) {
	done(req.ResponseKind().(*kmsg.CreateTopicsResponse))
}

func (c *Controller) AllocateProducerIDs(req *kmsg.AllocateProducerIDsRequest, done func(*kmsg.AllocateProducerIDsResponse)) {
	resp := req.ResponseKind().(*kmsg.AllocateProducerIDsResponse)
	resp.ErrorCode = kerr.UnsupportedVersion.Code
	done(resp)
}
