package broker

// DescribeCluster (key 60), versions 0-1.
//
// Answers the cluster id, the controller id and the brokers, as Metadata
// does: the registered, unfenced brokers, and this one even before its
// registration commits. As in Kafka, a broker names as "controller" a
// live broker (controllerIDForClients in cluster.go), since clients
// cannot talk to KRaft controllers directly. Authorized operations are not computed and are
// reported as omitted.
//
// Version notes: v1 adds EndpointType (KIP-919). A broker serves
// EndpointType 1 (brokers); asking it for 2 (controllers) is
// MISMATCHED_ENDPOINT_TYPE, and any other type UNSUPPORTED_ENDPOINT_TYPE,
// both with a message, exactly as Kafka answers (INVALID_REQUEST at v0,
// which has no field for it and always means brokers). v2
// (IncludeFencedBrokers) is not served.

import (
	"strconv"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func init() {
	registerAPI(&api{key: 60, advertisedMin: 0, honouredMin: 0, max: 1, handle: (*Broker).handleDescribeCluster})
}

// Endpoint types of DescribeCluster v1 (KIP-919).
const (
	endpointTypeBrokers     = 1
	endpointTypeControllers = 2
)

func (b *Broker) handleDescribeCluster(x *exchange) {
	req := x.request.Body.(*kmsg.DescribeClusterRequest)
	resp := req.ResponseKind().(*kmsg.DescribeClusterResponse)
	refuse := func(code *kerr.Error, message string) {
		if req.Version == 0 {
			code = kerr.InvalidRequest
		}
		resp.ErrorCode, resp.ErrorMessage = code.Code, &message
		x.respond(resp)
	}
	switch req.EndpointType {
	case endpointTypeBrokers:
	case endpointTypeControllers:
		refuse(kerr.MismatchedEndpointType, "the request was sent to an endpoint of type BROKER, but we wanted an endpoint of type CONTROLLER")
		return
	default:
		refuse(kerr.UnsupportedEndpointType, "unsupported endpoint type "+strconv.Itoa(int(req.EndpointType)))
		return
	}
	resp.EndpointType = endpointTypeBrokers
	resp.ClusterID = b.clusterID
	if req.IncludeClusterAuthorizedOperations {
		resp.ClusterAuthorizedOperations = clusterOperations
	}
	resp.ControllerID = b.controllerIDForClients()
	for _, mb := range b.metadataBrokers() {
		broker := kmsg.NewDescribeClusterResponseBroker()
		broker.NodeID, broker.Host, broker.Port, broker.Rack = mb.NodeID, mb.Host, mb.Port, mb.Rack
		resp.Brokers = append(resp.Brokers, broker)
	}
	x.respond(resp)
}
