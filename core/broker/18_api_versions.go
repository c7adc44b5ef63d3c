package broker

// ApiVersions (key 18), versions 0-3.
//
// Lists every API this broker serves with the version range it advertises
// (see api_table.go for why a range can start below what is honoured).
// A request newer than this build knows is answered in v0 form with
// UNSUPPORTED_VERSION and the full list (KIP-511), so the client can retry
// at a version both sides speak; client.rejectUndecodable does that.
// v3 carries the client's software name and version, which we only log.

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func init() {
	registerAPI(&api{key: apiVersionsKey, advertisedMin: 0, honouredMin: 0, max: 3, handle: (*Broker).handleAPIVersions})
}

func (b *Broker) handleAPIVersions(x *exchange) {
	req := x.request.Body.(*kmsg.ApiVersionsRequest)
	resp := req.ResponseKind().(*kmsg.ApiVersionsResponse)
	if req.Version >= 3 && (req.ClientSoftwareName == "" || req.ClientSoftwareVersion == "") {
		// KIP-511 requires both; Kafka answers INVALID_REQUEST.
		resp.ErrorCode = kerr.InvalidRequest.Code
	}
	resp.ApiKeys = advertisedOn(x.client.controllerListener)
	x.respond(resp)
}

// apiVersionsUnsupported is the v0 answer to an ApiVersions request of a
// version this build does not know.
func apiVersionsUnsupported() *kmsg.ApiVersionsResponse {
	resp := kmsg.NewPtrApiVersionsResponse()
	resp.ErrorCode = kerr.UnsupportedVersion.Code
	resp.ApiKeys = advertisedOn(false)
	return resp
}

// advertised holds what ApiVersions answers on the client listener (0)
// and on the controller listener (1). registerAPI keeps it up to date, so
// it is complete once the package is initialised and never changes after:
// every connection opens with ApiVersions, and answers share the lists
// read-only (each answer is encoded as it is given) rather than sorting
// the API table again for each.
var advertised [2][]kmsg.ApiVersionsResponseApiKey

// advertisedOn is what ApiVersions answers on a listener.
func advertisedOn(controllerListener bool) []kmsg.ApiVersionsResponseApiKey {
	if controllerListener {
		return advertised[1]
	}
	return advertised[0]
}

// advertisedAPIs lists the APIs served on a listener: the node-to-node
// ones only on the controller listener.
func advertisedAPIs(controllerListener bool) []kmsg.ApiVersionsResponseApiKey {
	var list []kmsg.ApiVersionsResponseApiKey
	for _, a := range apis { // in key order
		if a != nil && a.servedOn(controllerListener) {
			list = append(list, kmsg.ApiVersionsResponseApiKey{ApiKey: a.key, MinVersion: a.advertisedMin, MaxVersion: a.maxOn(controllerListener)})
		}
	}
	return list
}
