package main

import (
	"os"

	"github.com/twmb/franz-go/pkg/kgo"
)

// clientWarnings prints the Kafka client's warnings and errors to stderr,
// as Kafka's console tools log theirs: a broker that cannot be reached
// ("unable to open connection to broker"), a group join that failed. Without
// them `sluice consume` against a broker that is down waits in silence.
func clientWarnings(command string) kgo.Logger {
	prefix := "sluice " + command + ": "
	return kgo.BasicLogger(os.Stderr, kgo.LogLevelWarn, func() string { return prefix })
}
