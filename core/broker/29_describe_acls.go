package broker

// DescribeAcls (key 29), versions 1-3.
//
// Sluice has no authorizer: every client may do everything, as a Kafka
// broker without authorizer.class.name. Kafka then still serves the ACL
// APIs and answers each with SECURITY_DISABLED, "No Authorizer is
// configured.", and tools rely on it: kafka-acls.sh reports it, and
// admin UIs take it to mean ACLs are off rather than that the broker is
// too old (which is what an API missing from ApiVersions says). So does
// Sluice, for DescribeAcls, CreateAcls and DeleteAcls alike. Version 0 of
// each is not served, as Kafka 4 serves none (KIP-896).

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func init() {
	registerAPI(&api{key: 29, advertisedMin: 1, honouredMin: 1, max: 3, handle: (*Broker).handleDescribeACLs})
}

// noAuthorizerMessage is Kafka's message with SECURITY_DISABLED.
const noAuthorizerMessage = "No Authorizer is configured."

func (b *Broker) handleDescribeACLs(x *exchange) {
	req := x.request.Body.(*kmsg.DescribeACLsRequest)
	resp := req.ResponseKind().(*kmsg.DescribeACLsResponse)
	message := noAuthorizerMessage
	resp.ErrorCode, resp.ErrorMessage = kerr.SecurityDisabled.Code, &message
	x.respond(resp)
}
