package broker

// CreateAcls (key 30), versions 1-3: every creation refused with
// SECURITY_DISABLED, as a Kafka broker without an authorizer answers (see
// 29_describe_acls.go).

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func init() {
	registerAPI(&api{key: 30, advertisedMin: 1, honouredMin: 1, max: 3, handle: (*Broker).handleCreateACLs})
}

func (b *Broker) handleCreateACLs(x *exchange) {
	req := x.request.Body.(*kmsg.CreateACLsRequest)
	resp := req.ResponseKind().(*kmsg.CreateACLsResponse)
	message := noAuthorizerMessage
	for range req.Creations {
		result := kmsg.NewCreateACLsResponseResult()
		result.ErrorCode, result.ErrorMessage = kerr.SecurityDisabled.Code, &message
		resp.Results = append(resp.Results, result)
	}
	x.respond(resp)
}
