package broker

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// register announces this broker to the controller, as a KRaft broker does
// at start (BrokerRegistration, KIP-631): a new incarnation id, so the
// controller gives it a new broker epoch that fences whatever the previous
// process left behind. The broker serves clients meanwhile; its partitions'
// leadership comes from the metadata it already has.
func (b *Broker) register() {
	req := kmsg.NewPtrBrokerRegistrationRequest()
	req.BrokerID = b.config.NodeID
	req.ClusterID = b.clusterID
	for i := 0; i < len(req.IncarnationID); i += 8 {
		v := b.w.Entropy.Uint64()
		for j := 0; j < 8; j++ {
			req.IncarnationID[i+j] = byte(v >> (8 * j))
		}
	}
	listener := kmsg.NewBrokerRegistrationRequestListener()
	listener.Name = "PLAINTEXT"
	listener.Host = b.config.AdvertisedHost
	listener.Port = uint16(b.config.AdvertisedPort)
	req.Listeners = append(req.Listeners, listener)
	if b.config.Rack != "" {
		req.Rack = &b.config.Rack
	}
	b.controller.RegisterBroker(req, func(resp *kmsg.BrokerRegistrationResponse) {
		if resp.ErrorCode != 0 {
			b.log.Error("broker registration failed", "error", kerr.ErrorForCode(resp.ErrorCode))
			return
		}
		b.brokerEpoch = resp.BrokerEpoch
		b.log.Info("broker registered", "epoch", resp.BrokerEpoch)
		b.requestProducerIDBlock()
	})
}
