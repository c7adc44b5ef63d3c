package harness

import (
	"strings"
	"testing"
)

func TestWorkloadRefusesBadBatchesAndCodecs(t *testing.T) {
	for _, tc := range []struct {
		name   string
		change func(*Workload)
		want   string
	}{
		{"65 records a send", func(w *Workload) { w.BatchRecords = 65 }, "records per send"},
		{"negative records a send", func(w *Workload) { w.BatchRecords = -1 }, "records per send"},
		{"brotli", func(w *Workload) { w.Compression = "brotli" }, "brotli"},
	} {
		w := DefaultWorkload(3)
		tc.change(&w)
		if err := w.validate(3); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error mentioning %q", tc.name, err, tc.want)
		}
	}
	w := DefaultWorkload(3)
	w.BatchRecords, w.Compression = 64, "zstd"
	if err := w.validate(3); err != nil {
		t.Errorf("64 records a send, zstd: %v", err)
	}
}
