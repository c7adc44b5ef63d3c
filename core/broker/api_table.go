package broker

import (
	"github.com/twmb/franz-go/pkg/kmsg"
)

// api describes one Kafka API as this broker offers it.
//
// advertisedMin is what ApiVersions reports. It can sit below honouredMin:
// Kafka 4 advertises Produce from v0 because librdkafka disables compression
// unless it sees Produce v0 supported (KAFKA-18659), while answering v0 to v2
// with UNSUPPORTED_VERSION. A request between advertisedMin and honouredMin
// is answered by the API's reject function with that error.
type api struct {
	key           int16
	advertisedMin int16
	honouredMin   int16
	max           int16
	handle        func(b *Broker, x *exchange)
	// reject builds an UNSUPPORTED_VERSION answer for advertised but
	// unhonoured versions; needed only where advertisedMin < honouredMin.
	reject func(req kmsg.Request) kmsg.Response
	// nodeToNode marks the APIs only nodes send one another (the
	// quorum's, broker registration and heartbeats, AlterPartition,
	// AllocateProducerIds). They are served and advertised on the
	// controller listener only; on a client listener they do not exist.
	nodeToNode bool
	// controllerListenerMax, when above max, is the highest version
	// served on the controller listener: the quorum fetches the
	// metadata log with Fetch versions clients are not offered.
	controllerListenerMax int16
}

// maxOn is the highest version served on a listener.
func (a *api) maxOn(controllerListener bool) int16 {
	if controllerListener {
		return max(a.max, a.controllerListenerMax)
	}
	return a.max
}

// servedOn reports whether the API exists on a listener.
func (a *api) servedOn(controllerListener bool) bool {
	return controllerListener || !a.nodeToNode
}

// apiVersionsKey is ApiVersions' key; its answers get special treatment.
const apiVersionsKey = 18

// apiKeyLimit bounds the API keys the table can hold: above every key
// Kafka has assigned.
const apiKeyLimit = 128

// apis lists every API the broker serves, indexed by key (nil where it
// serves none): every request looks its API up, and an array needs no
// hashing. Handlers live in files named after the key: 00_produce.go,
// 01_fetch.go, and so on.
var apis [apiKeyLimit]*api

// apiFor returns the API a request names, or nil if it is not served.
func apiFor(key int16) *api {
	if key < 0 || int(key) >= len(apis) {
		return nil
	}
	return apis[key]
}

func registerAPI(a *api) {
	if a.key < 0 || int(a.key) >= len(apis) {
		panic("broker: API key beyond apiKeyLimit: " + kmsg.NameForKey(a.key))
	}
	if a.honouredMin < a.advertisedMin || a.max < a.honouredMin {
		panic("broker: inconsistent version range for " + kmsg.NameForKey(a.key))
	}
	if max := kmsg.RequestForKey(a.key).MaxVersion(); a.maxOn(true) > max {
		panic("broker: " + kmsg.NameForKey(a.key) + " advertised beyond what kmsg can decode")
	}
	if a.advertisedMin < a.honouredMin && a.reject == nil {
		panic("broker: " + kmsg.NameForKey(a.key) + " advertises versions it cannot reject")
	}
	apis[a.key] = a
	advertised = [2][]kmsg.ApiVersionsResponseApiKey{advertisedAPIs(false), advertisedAPIs(true)}
}

// dispatch routes a decoded request to its handler, after checking that this
// broker serves the API at that version.
func (b *Broker) dispatch(x *exchange) {
	h := x.request.Header
	onController := x.client.controllerListener
	a := apiFor(h.Key)
	switch {
	case h.Key == apiVersionsKey && h.Version > a.max:
		x.respondAPIVersionsUnsupported()
	case a == nil || !a.servedOn(onController) || h.Version < a.advertisedMin || h.Version > a.maxOn(onController):
		// Clients only send what ApiVersions advertised; anything
		// else is a broken or hostile client, and Kafka closes the
		// connection.
		x.client.logger().Warn("closing connection: API version not served",
			"api", kmsg.NameForKey(h.Key), "version", h.Version)
		x.client.close()
	case h.Version < a.honouredMin:
		x.respond(a.reject(x.request.Body))
	default:
		b.metrics.requests[h.Key]++
		a.handle(b, x)
	}
}
