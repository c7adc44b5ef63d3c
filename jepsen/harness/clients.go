package harness

import (
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// clientLogName is the file, beside the nodes' logs, that every client's
// franz-go log goes to: what a client decided (a batch retried, a producer
// id reset, a batch taken as written without an offset) is half of what a
// history shows, and the other half of a failure's story.
const clientLogName = "clients.log"

// ClientOptions are the kgo options every client of the harness starts
// from: the proxied bootstrap addresses, metadata refreshed quickly
// enough to follow a leader that moved within a fault window, and the
// client log at info level.
func (c *Cluster) ClientOptions(extra ...kgo.Opt) []kgo.Opt {
	var logger []kgo.Opt
	if c.clientLog != nil {
		logger = append(logger, kgo.WithLogger(kgo.BasicLogger(c.clientLog, kgo.LogLevelInfo, func() string {
			return time.Now().UTC().Format(time.RFC3339Nano) + " "
		})))
	}
	return append(append([]kgo.Opt{
		kgo.SeedBrokers(c.Bootstrap()...),
		kgo.ClientID("sluice-jepsen"),
		kgo.MetadataMinAge(clientMetadataAgeMin),
		kgo.MetadataMaxAge(clientMetadataAgeMax),
		kgo.DialTimeout(clientDialTimeout),
		kgo.RequestTimeoutOverhead(clientRequestTimeoutOverhead),
		kgo.RetryBackoffFn(func(int) time.Duration { return clientRetryBackoff }),
	}, logger...), extra...)
}
