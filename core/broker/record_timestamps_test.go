package broker

import (
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"sluice/core/batch"
	"sluice/core/metadata"
)

// Kafka's LogValidator judges every record's timestamp against
// message.timestamp.before.max.ms and after.max.ms, and takes a batch's
// max timestamp from its records. Sluice judged the header's max
// timestamp alone, and stored it as the producer wrote it: a batch with
// one record far in the past passed, and a header claiming a later time
// than any record put the batch later in the time index and retention.
func TestRecordTimestampsAreJudgedAndMakeTheMaxTimestamp(t *testing.T) {
	n := newTestNode(t, DefaultConfig())
	c := n.connect()
	c.createTopic("bounded", 1, metadata.ConfigMessageTimestampBeforeMs, "3600000")
	c.createTopic("plain", 1)
	now := n.machine.Clock.Now().UnixMilli()
	hour := time.Hour.Milliseconds()

	// The header's max timestamp is now; the first record is two hours
	// old.
	stale := batch.Build(batch.Spec{BaseTimestamp: now - 2*hour, MaxTimestamp: now, ProducerID: batch.NoProducerID,
		Records: []batch.Record{{Value: []byte("old")}, {Value: []byte("new"), TimestampDelta: 2 * hour}}})
	_, code := c.produceBatch("bounded", 0, stale)
	requireError(t, "a record older than message.timestamp.before.max.ms", code, nil, kerr.InvalidTimestamp)

	// A header claiming a day later than its records: stored with the
	// records' max.
	claiming := batch.Build(batch.Spec{BaseTimestamp: now, MaxTimestamp: now + 24*hour, ProducerID: batch.NoProducerID,
		Records: []batch.Record{{Value: []byte("a")}, {Value: []byte("b"), TimestampDelta: 5}}})
	if _, code := c.produceBatch("plain", 0, claiming); code != 0 {
		t.Fatalf("produce: %v", kerr.ErrorForCode(code))
	}
	stored := storedBatches(t, c, "plain")
	if len(stored) != 1 {
		t.Fatalf("%d batches stored, want 1", len(stored))
	}
	h, err := batch.Validate(stored[0])
	if err != nil {
		t.Fatalf("the stored batch fails its checks: %v", err)
	}
	if h.MaxTimestamp != now+5 {
		t.Fatalf("stored max timestamp %d, want the records' %d", h.MaxTimestamp, now+5)
	}
	if latest := listOffset(c, "plain", -3); latest.Timestamp != now+5 || latest.Offset != 1 {
		t.Fatalf("ListOffsets max timestamp: %+v, want offset 1 at %d", latest, now+5)
	}
}
