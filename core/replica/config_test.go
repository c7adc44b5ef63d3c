package replica

import (
	"math"
	"testing"
	"time"

	"sluice/core/metadata"
)

// Kafka 3.x's message.timestamp.difference.max.ms bounds a timestamp on
// both sides while message.timestamp.before.max.ms and after.max.ms are at
// their default, and gives way to either one set (LogConfig's
// getMessageTimestampBeforeMaxMs and AfterMaxMs).
func TestTimestampDifferenceStandsInForEitherBoundAtItsDefault(t *testing.T) {
	for _, c := range []struct {
		configs       map[string]string
		before, after time.Duration
	}{
		{nil, math.MaxInt64, math.MaxInt64},
		{map[string]string{metadata.ConfigMessageTimestampDifferenceMs: "60000"}, time.Minute, time.Minute},
		{map[string]string{metadata.ConfigMessageTimestampDifferenceMs: "60000", metadata.ConfigMessageTimestampBeforeMs: "1000"}, time.Second, time.Minute},
		{map[string]string{metadata.ConfigMessageTimestampDifferenceMs: "60000", metadata.ConfigMessageTimestampAfterMs: "2000"}, time.Minute, 2 * time.Second},
		{map[string]string{metadata.ConfigMessageTimestampBeforeMs: "1000"}, time.Second, math.MaxInt64},
	} {
		config, err := ConfigFrom(c.configs, nil)
		if err != nil {
			t.Fatalf("%v: %v", c.configs, err)
		}
		if config.TimestampBeforeMax != c.before || config.TimestampAfterMax != c.after {
			t.Errorf("%v: before %v, after %v; want %v and %v", c.configs, config.TimestampBeforeMax, config.TimestampAfterMax, c.before, c.after)
		}
	}
}
