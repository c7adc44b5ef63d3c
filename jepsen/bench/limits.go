package bench

import "time"

// Bounds of a benchmark run. Every run is bounded in time and memory: a
// system that stops answering ends the run with an error, never hangs it.
const (
	// StampBytes is the prefix of every value the load generator sends:
	// the intended send time (8 bytes) and the run's nonce (8 bytes). It is
	// also the smallest record size.
	StampBytes = 16
	// RecordBytesMax bounds one value: Kafka's default message.max.bytes
	// is about 1 MiB.
	RecordBytesMax = 1 << 20
	// ProducersMax bounds the concurrent producers of one run.
	ProducersMax = 256
	// RateMax bounds a fixed target rate, in records per second.
	RateMax = 10_000_000
	// DurationMax bounds the measured window and the warm-up.
	DurationMax = time.Hour
	// FlushTimeout bounds how long the records sent before the end of the
	// window may take to be acknowledged once sending stops.
	FlushTimeout = time.Minute
	// IdleTimeout ends a consume that has received nothing for this long.
	IdleTimeout = 15 * time.Second
	// PendingMaxDefault is the default bound on records handed to a
	// client and not yet acknowledged, per producer: the same for every
	// system, so none gets a deeper pipeline than another.
	PendingMaxDefault = 10_000
	// PendingMax bounds PendingMax settings.
	PendingMax = 1_000_000
)
