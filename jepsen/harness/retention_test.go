package harness

import "testing"

func TestRetentionConfiguredByAnyFiniteRetentionSetting(t *testing.T) {
	cases := map[string]bool{
		"log.retention.bytes=16384": true,
		"log.retention.ms=1000":     true,
		"log.retention.hours=1":     true,
		"log.retention.minutes=5":   true,
		"log.retention.bytes=-1":    false,
		"log.segment.bytes=4096":    false,
		"retention.bytes=100":       false, // a topic config, not a broker setting
	}
	for setting, want := range cases {
		if got := retentionConfigured([]string{"log.flush.interval.messages=1", setting}); got != want {
			t.Errorf("retentionConfigured(%q) = %v, want %v", setting, got, want)
		}
	}
	if retentionConfigured(nil) {
		t.Error("no settings: retention configured")
	}
}
