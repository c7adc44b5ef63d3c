package group

import (
	"strings"
	"testing"
	"time"
)

func TestConfigValidation(t *testing.T) {
	if err := DefaultConfig().Validate(); err != nil {
		t.Fatalf("the defaults are invalid: %v", err)
	}
	cases := []struct {
		change func(*Config)
		want   string
	}{
		{func(c *Config) { c.OffsetsTopicPartitions = 0 }, "offsets.topic.num.partitions"},
		{func(c *Config) { c.MaxSessionTimeout = time.Second }, "group.max.session.timeout.ms"},
		{func(c *Config) { c.InitialRebalanceDelay = -1 }, "group.initial.rebalance.delay.ms"},
		{func(c *Config) { c.MaxSize = 0 }, "group.max.size"},
		{func(c *Config) { c.OffsetsRetention = 0 }, "offsets.retention.minutes"},
		{func(c *Config) { c.OffsetCommitTimeout = 0 }, "offsets.commit.timeout.ms"},
	}
	for _, c := range cases {
		config := DefaultConfig()
		c.change(&config)
		err := config.Validate()
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("got %v, want an error naming %s", err, c.want)
		}
	}
}
