package log_test

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/twmb/franz-go/pkg/kmsg"

	"sluice/core/batch"
	"sluice/core/log"
)

// keyedBatch builds a batch whose records are given as "key=value",
// "key" alone for a tombstone (null value), or "=value" for a record
// without a key. Record i's timestamp is timestamp+i.
func keyedBatch(timestamp int64, records ...string) []byte {
	spec := batch.Spec{BaseTimestamp: timestamp, ProducerID: batch.NoProducerID}
	for i, text := range records {
		spec.Records = append(spec.Records, keyedRecord(text, int64(i)))
	}
	return batch.Build(spec)
}

func keyedRecord(text string, timestampDelta int64) batch.Record {
	r := batch.Record{TimestampDelta: timestampDelta}
	key, value, hasValue := strings.Cut(text, "=")
	if key != "" {
		r.Key = []byte(key)
	}
	if hasValue {
		r.Value = []byte(value)
	}
	return r
}

// storedRecord is one record as the log serves it.
type storedRecord struct {
	offset     int64
	key, value string
	keyless    bool
	tombstone  bool
	batchBase  int64
}

func (r storedRecord) String() string {
	switch {
	case r.tombstone:
		return fmt.Sprintf("%d:%s", r.offset, r.key)
	case r.keyless:
		return fmt.Sprintf("%d:=%s", r.offset, r.value)
	}
	return fmt.Sprintf("%d:%s=%s", r.offset, r.key, r.value)
}

// records decodes every record of a run of batches, checking each with
// kmsg's reader too (the format a real client reads) and that offsets
// increase, and returns them with the batch headers.
func records(t tester, codecs testCodecs, b []byte) ([]storedRecord, []batch.Header) {
	t.Helper()
	var all []storedRecord
	var headers []batch.Header
	last := int64(-1)
	for s := (batch.Scanner{Buf: b, VerifyCRC: true}); ; {
		if !s.Next() {
			if s.Err() != nil {
				t.Fatalf("stored bytes are not whole valid batches: %v", s.Err())
			}
			break
		}
		h, err := batch.ValidateCompacted(s.Batch())
		if err != nil {
			t.Fatalf("batch at %d fails ValidateCompacted: %v", s.Header().BaseOffset, err)
		}
		if h.BaseOffset <= last {
			t.Fatalf("batch at %d does not follow offset %d", h.BaseOffset, last)
		}
		last = h.LastOffset()
		headers = append(headers, h)
		var kb kmsg.RecordBatch
		if err := kb.ReadFrom(s.Batch()); err != nil {
			t.Fatalf("kmsg cannot read the batch at %d: %v", h.BaseOffset, err)
		}
		if kb.FirstOffset != h.BaseOffset || kb.NumRecords != h.RecordCount || kb.LastOffsetDelta != h.LastOffsetDelta {
			t.Fatalf("kmsg read the batch at %d differently: %+v", h.BaseOffset, kb)
		}
		section := kb.Records
		if codec := h.Compression(); codec != batch.CompressionNone {
			section, err = codecs.Decompress(codec, section, 1<<30)
			if err != nil {
				t.Fatalf("batch at %d: %v", h.BaseOffset, err)
			}
		}
		previousDelta := int32(-1)
		for range kb.NumRecords {
			length, n := binary.Varint(section)
			if n <= 0 || int(length)+n > len(section) {
				t.Fatalf("batch at %d: record framing", h.BaseOffset)
			}
			var kr kmsg.Record
			if err := kr.ReadFrom(section[:n+int(length)]); err != nil {
				t.Fatalf("kmsg cannot read a record of the batch at %d: %v", h.BaseOffset, err)
			}
			section = section[n+int(length):]
			if kr.OffsetDelta <= previousDelta || kr.OffsetDelta > h.LastOffsetDelta {
				t.Fatalf("batch at %d: record offset delta %d after %d", h.BaseOffset, kr.OffsetDelta, previousDelta)
			}
			previousDelta = kr.OffsetDelta
			all = append(all, storedRecord{
				offset: h.BaseOffset + int64(kr.OffsetDelta), key: string(kr.Key), value: string(kr.Value),
				keyless: kr.Key == nil, tombstone: kr.Value == nil, batchBase: h.BaseOffset,
			})
		}
		if len(section) != 0 {
			t.Fatalf("batch at %d: %d bytes after its records", h.BaseOffset, len(section))
		}
	}
	return all, headers
}

// logRecords reads the whole log from its start, one batch at a time from
// the offset after the last, and decodes it.
func logRecords(t tester, l *log.Log) ([]storedRecord, []batch.Header) {
	t.Helper()
	return records(t, testCodecs{}, bytes.Join(readAll(t, l), nil))
}

// compactAll calls Compact until the pass in progress (or a new one) has
// finished, then syncs until every swap is in place on disk.
func compactAll(t tester, h *harness, l *log.Log, options log.CompactOptions) log.CompactionResult {
	t.Helper()
	var total log.CompactionResult
	for range 1000 {
		r, err := l.Compact(options)
		if err != nil {
			t.Fatalf("Compact: %v", err)
		}
		total.PassStarted = total.PassStarted || r.PassStarted
		total.SegmentsRewritten += r.SegmentsRewritten
		total.RecordsRemoved += r.RecordsRemoved
		total.TombstonesRemoved += r.TombstonesRemoved
		total.BatchesRemoved += r.BatchesRemoved
		total.BatchesLeftIntact += r.BatchesLeftIntact
		total.BytesRead += r.BytesRead
		total.BytesWritten += r.BytesWritten
		if r.PassFinished || !total.PassStarted {
			total.PassFinished = r.PassFinished
			h.syncAll(l)
			return total
		}
	}
	t.Fatalf("a compaction pass did not finish in 1000 calls")
	return total
}

// compactConfig is a small-segment config whose passes always run.
func compactConfig() log.Config {
	c := smallConfig()
	c.MinCleanableDirtyRatio = 0
	return c
}

// testCodecs is core.Codecs with gzip only, from the standard library.
type testCodecs struct{}

var errTestCodec = errors.New("test codecs know gzip only")

func (testCodecs) Decompress(codec int, src []byte, sizeMax int) ([]byte, error) {
	if codec != batch.CompressionGzip {
		return nil, errTestCodec
	}
	r, err := gzip.NewReader(bytes.NewReader(src))
	if err != nil {
		return nil, err
	}
	out, err := io.ReadAll(io.LimitReader(r, int64(sizeMax)+1))
	if err != nil {
		return nil, err
	}
	if len(out) > sizeMax {
		return nil, errors.New("too big")
	}
	return out, nil
}

func (testCodecs) Compress(codec int, dst, src []byte) ([]byte, error) {
	if codec != batch.CompressionGzip {
		return nil, errTestCodec
	}
	var b bytes.Buffer
	w := gzip.NewWriter(&b)
	w.Write(src)
	w.Close()
	return append(dst, b.Bytes()...), nil
}

// gzipBatch is keyedBatch with its records gzip-compressed.
func gzipBatch(timestamp int64, records ...string) []byte {
	plain := keyedBatch(timestamp, records...)
	h, _ := batch.Parse(plain)
	section, _ := batch.RecordsSection(plain)
	compressed, _ := testCodecs{}.Compress(batch.CompressionGzip, nil, section)
	h.Attributes |= batch.CompressionGzip
	return batch.Rebuild(h, compressed, h.RecordCount)
}
