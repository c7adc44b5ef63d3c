package broker

// DeleteAcls (key 31), versions 1-3: every filter answered with
// SECURITY_DISABLED, as a Kafka broker without an authorizer answers (see
// 29_describe_acls.go).

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func init() {
	registerAPI(&api{key: 31, advertisedMin: 1, honouredMin: 1, max: 3, handle: (*Broker).handleDeleteACLs})
}

func (b *Broker) handleDeleteACLs(x *exchange) {
	req := x.request.Body.(*kmsg.DeleteACLsRequest)
	resp := req.ResponseKind().(*kmsg.DeleteACLsResponse)
	message := noAuthorizerMessage
	for range req.Filters {
		result := kmsg.NewDeleteACLsResponseResult()
		result.ErrorCode, result.ErrorMessage = kerr.SecurityDisabled.Code, &message
		resp.Results = append(resp.Results, result)
	}
	x.respond(resp)
}
