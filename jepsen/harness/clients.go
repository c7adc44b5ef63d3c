package harness

import (
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// ClientOptions are the kgo options every client of the harness starts
// from: the proxied bootstrap addresses, and metadata refreshed quickly
// enough to follow a leader that moved within a fault window.
func (c *Cluster) ClientOptions(extra ...kgo.Opt) []kgo.Opt {
	return append([]kgo.Opt{
		kgo.SeedBrokers(c.Bootstrap()...),
		kgo.ClientID("sluice-jepsen"),
		kgo.MetadataMinAge(clientMetadataAgeMin),
		kgo.MetadataMaxAge(clientMetadataAgeMax),
		kgo.DialTimeout(clientDialTimeout),
		kgo.RequestTimeoutOverhead(clientRequestTimeoutOverhead),
		kgo.RetryBackoffFn(func(int) time.Duration { return clientRetryBackoff }),
	}, extra...)
}
