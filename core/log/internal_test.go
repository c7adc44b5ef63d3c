package log

import (
	"bytes"
	"errors"
	"fmt"
	"hash/crc32"
	"strings"
	"testing"

	"sluice/core/batch"
)

func TestCheckpointRoundTripsAndRejectsDamage(t *testing.T) {
	c := checkpoint{startOffset: 120, recoveryPoint: 4000, cleanerOffset: 2500, epochs: []EpochEntry{{3, 120}, {5, 3100}}}
	encoded := c.encode()
	want := "sluice-log-checkpoint 2\nstart-offset 120\nrecovery-point 4000\ncleaner-offset 2500\nepochs 2\n3 120\n5 3100\n"
	if !strings.HasPrefix(string(encoded), want) {
		t.Fatalf("encoded checkpoint:\n%s", encoded)
	}
	decoded, err := decodeCheckpoint(encoded)
	if err != nil || decoded.startOffset != 120 || decoded.recoveryPoint != 4000 || decoded.cleanerOffset != 2500 ||
		len(decoded.epochs) != 2 || decoded.epochs[1] != (EpochEntry{5, 3100}) {
		t.Fatalf("decode: %+v, %v", decoded, err)
	}
	// A version 1 file, from before compaction, reads with cleaner offset 0.
	v1 := "sluice-log-checkpoint 1\nstart-offset 120\nrecovery-point 4000\nepochs 1\n3 120\n"
	v1 += fmt.Sprintf("crc32c %08x\n", crc32.Checksum([]byte(v1), castagnoli))
	decoded, err = decodeCheckpoint([]byte(v1))
	if err != nil || decoded.startOffset != 120 || decoded.recoveryPoint != 4000 || decoded.cleanerOffset != 0 || len(decoded.epochs) != 1 {
		t.Fatalf("decode version 1: %+v, %v", decoded, err)
	}
	empty, err := decodeCheckpoint(checkpoint{}.encode())
	if err != nil || empty.startOffset != 0 || len(empty.epochs) != 0 {
		t.Fatalf("empty checkpoint: %+v, %v", empty, err)
	}
	// Every single-bit flip anywhere is caught.
	for i := range encoded {
		for bit := range 8 {
			damaged := append([]byte{}, encoded...)
			damaged[i] ^= 1 << bit
			if _, err := decodeCheckpoint(damaged); !errors.Is(err, errBadData) {
				t.Fatalf("flip of bit %d of byte %d not detected", bit, i)
			}
		}
	}
	for _, n := range []int{0, 1, len(encoded) / 2, len(encoded) - 1} {
		if _, err := decodeCheckpoint(encoded[:n]); !errors.Is(err, errBadData) {
			t.Fatalf("checkpoint cut to %d bytes accepted", n)
		}
	}
	// Epochs that do not increase are refused even with a valid CRC.
	bad := checkpoint{epochs: []EpochEntry{{5, 10}, {4, 20}}}.encode()
	if _, err := decodeCheckpoint(bad); !errors.Is(err, errBadData) {
		t.Fatalf("decreasing epochs accepted")
	}
}

// encode appends with strconv; the file must stay what fmt wrote, byte for
// byte, or checkpoints on existing disks (and every trace) would change.
func TestCheckpointEncodeMatchesFormattedText(t *testing.T) {
	formatted := func(c checkpoint) string {
		text := fmt.Sprintf("%s\nstart-offset %d\nrecovery-point %d\ncleaner-offset %d\nepochs %d\n",
			checkpointMagic, c.startOffset, c.recoveryPoint, c.cleanerOffset, len(c.epochs))
		for _, e := range c.epochs {
			text += fmt.Sprintf("%d %d\n", e.Epoch, e.StartOffset)
		}
		return text + fmt.Sprintf("crc32c %08x\n", crc32.Checksum([]byte(text), castagnoli))
	}
	many := make([]EpochEntry, epochEntriesMax)
	for i := range many {
		many[i] = EpochEntry{Epoch: int32(1<<31 - 1 - epochEntriesMax + i), StartOffset: 1<<62 + int64(i)}
	}
	for _, c := range []checkpoint{
		{},
		{startOffset: 120, recoveryPoint: 4000, cleanerOffset: 2500, epochs: []EpochEntry{{3, 120}, {5, 3100}}},
		{startOffset: 1<<63 - 1, recoveryPoint: -1, cleanerOffset: -1 << 63, epochs: []EpochEntry{{-1 << 31, -5}}},
		{startOffset: 7, recoveryPoint: 7, epochs: many},
	} {
		if got, want := string(c.encode()), formatted(c); got != want {
			t.Fatalf("encoded:\n%s\nwant:\n%s", got, want)
		}
	}
}

func TestOffsetIndexLookupAndSanityChecks(t *testing.T) {
	x := offsetIndex{baseOffset: 100}
	if e := x.lookup(150); e != (offsetEntry{100, 0}) {
		t.Fatalf("empty lookup %+v", e)
	}
	x.add(110, 400)
	x.add(130, 900)
	x.add(131, 1000)
	cases := []struct{ offset, wantOffset, wantPosition int64 }{
		{100, 100, 0}, {109, 100, 0}, {110, 110, 400}, {129, 110, 400}, {130, 130, 900}, {500, 131, 1000},
	}
	for _, c := range cases {
		if e := x.lookup(c.offset); e.offset != c.wantOffset || e.position != c.wantPosition {
			t.Fatalf("lookup(%d) = %+v, want (%d, %d)", c.offset, e, c.wantOffset, c.wantPosition)
		}
	}
	decoded, err := decodeOffsetIndex(100, x.encode(), 2000)
	if err != nil || len(decoded.entries) != 3 || decoded.entries[2] != (offsetEntry{131, 1000}) {
		t.Fatalf("round trip: %+v, %v", decoded, err)
	}
	encoded := x.encode()
	if _, err := decodeOffsetIndex(100, encoded[:len(encoded)-3], 2000); !errors.Is(err, errBadData) {
		t.Fatalf("partial entry accepted")
	}
	if _, err := decodeOffsetIndex(100, encoded, 1000); !errors.Is(err, errBadData) {
		t.Fatalf("position at the segment's end accepted")
	}
	// With a checksum that holds, so that the sanity check refuses it.
	swapped := offsetIndexKind.appendChecksum(append(append([]byte{}, encoded[8:16]...), encoded[0:8]...), 0)
	if _, err := decodeOffsetIndex(100, swapped, 2000); !errors.Is(err, errBadData) {
		t.Fatalf("decreasing entries accepted")
	}
	x.truncateFromPosition(900)
	if len(x.entries) != 1 || x.last() != (offsetEntry{110, 400}) {
		t.Fatalf("truncateFromPosition(900) left %+v", x.entries)
	}
}

func TestTimeIndexKeepsOnlyGrowingTimestamps(t *testing.T) {
	x := timeIndex{baseOffset: 0}
	x.maybeAdd(noTimestamp, 0) // no timestamp: nothing to index
	x.maybeAdd(50, 3)
	x.maybeAdd(50, 5) // not larger
	x.maybeAdd(40, 6)
	x.maybeAdd(70, 9)
	if len(x.entries) != 2 || x.entries[1] != (timeEntry{70, 9}) {
		t.Fatalf("entries %+v", x.entries)
	}
	if _, ok := x.lastBefore(50); ok {
		t.Fatalf("lastBefore(50) found an entry older than the first")
	}
	if e, ok := x.lastBefore(51); !ok || e.offset != 3 {
		t.Fatalf("lastBefore(51) = %+v", e)
	}
	if e, ok := x.lastBefore(1000); !ok || e.offset != 9 {
		t.Fatalf("lastBefore(1000) = %+v", e)
	}
	decoded, err := decodeTimeIndex(0, x.encode())
	if err != nil || len(decoded.entries) != 2 || decoded.entries[0] != (timeEntry{50, 3}) {
		t.Fatalf("round trip %+v %v", decoded, err)
	}
	x.truncateFromOffset(9)
	if len(x.entries) != 1 {
		t.Fatalf("truncateFromOffset(9) left %+v", x.entries)
	}
}

// An index file's checksum catches every single-bit flip and every cut,
// which Kafka's sanity checks alone let through when the result still
// looks like entries (TestRecoveryNeverTrustsATornIndexFile).
func TestIndexFilesRejectEveryFlipAndCut(t *testing.T) {
	offsets := offsetIndex{baseOffset: 100}
	offsets.add(110, 400)
	offsets.add(130, 900)
	times := timeIndex{baseOffset: 100}
	times.maybeAdd(1_000, 104)
	times.maybeAdd(2_000, 131)
	for _, file := range []struct {
		name   string
		b      []byte
		decode func([]byte) error
	}{
		{"offset index", offsets.encode(), func(b []byte) error { _, err := decodeOffsetIndex(100, b, 2000); return err }},
		{"time index", times.encode(), func(b []byte) error { _, err := decodeTimeIndex(100, b); return err }},
		{"empty offset index", (&offsetIndex{baseOffset: 100}).encode(), func(b []byte) error { _, err := decodeOffsetIndex(100, b, 2000); return err }},
		{"empty time index", (&timeIndex{baseOffset: 100}).encode(), func(b []byte) error { _, err := decodeTimeIndex(100, b); return err }},
	} {
		if err := file.decode(file.b); err != nil {
			t.Fatalf("%s: %v", file.name, err)
		}
		for i := range file.b {
			for bit := range 8 {
				damaged := append([]byte{}, file.b...)
				damaged[i] ^= 1 << bit
				if err := file.decode(damaged); !errors.Is(err, errBadData) {
					t.Fatalf("%s: flip of bit %d of byte %d not detected", file.name, bit, i)
				}
			}
		}
		for n := range len(file.b) {
			if err := file.decode(file.b[:n]); !errors.Is(err, errBadData) {
				t.Fatalf("%s cut to %d bytes accepted", file.name, n)
			}
		}
	}
	// Zeros, as a torn write leaves them, never pass, nor does one kind
	// of file for the other.
	for n := range 64 {
		if _, err := decodeOffsetIndex(100, make([]byte, n), 2000); !errors.Is(err, errBadData) {
			t.Fatalf("%d zero bytes accepted as an offset index", n)
		}
		if _, err := decodeTimeIndex(100, make([]byte, n)); !errors.Is(err, errBadData) {
			t.Fatalf("%d zero bytes accepted as a time index", n)
		}
	}
	if _, err := decodeTimeIndex(100, (&offsetIndex{baseOffset: 100}).encode()); !errors.Is(err, errBadData) {
		t.Fatalf("an empty offset index accepted as a time index")
	}
}

// Whatever bytes an index file holds, decoding either refuses them as bad
// data or yields entries that keep the index's invariants and encode back
// to the same bytes.
func FuzzDecodeIndexFiles(f *testing.F) {
	offsets := offsetIndex{baseOffset: 100}
	offsets.add(110, 400)
	times := timeIndex{baseOffset: 100}
	times.maybeAdd(1_000, 104)
	f.Add(offsets.encode())
	f.Add(times.encode())
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		if x, err := decodeOffsetIndex(100, b, 1<<20); err == nil {
			for i, e := range x.entries {
				if e.offset < 100 || e.offset-100 > relativeOffsetMax || i > 0 && (e.offset <= x.entries[i-1].offset || e.position <= x.entries[i-1].position) {
					t.Fatalf("offset index entries %+v break the invariant", x.entries)
				}
			}
			if !bytes.Equal(x.encode(), b) {
				t.Fatalf("offset index does not encode back to its bytes")
			}
		} else if !errors.Is(err, errBadData) {
			t.Fatalf("offset index refused with %v, not bad data", err)
		}
		if x, err := decodeTimeIndex(100, b); err == nil {
			for i, e := range x.entries {
				if e.offset < 100 || e.offset-100 > relativeOffsetMax || e.timestamp <= noTimestamp || i > 0 && (e.offset <= x.entries[i-1].offset || e.timestamp <= x.entries[i-1].timestamp) {
					t.Fatalf("time index entries %+v break the invariant", x.entries)
				}
			}
			if !bytes.Equal(x.encode(), b) {
				t.Fatalf("time index does not encode back to its bytes")
			}
		} else if !errors.Is(err, errBadData) {
			t.Fatalf("time index refused with %v, not bad data", err)
		}
	})
}

// The cases of Kafka's LeaderEpochFileCacheTest for endOffsetFor
// (KIP-101, with KIP-279's answer for an epoch below every cached one).
func TestEpochCacheEndOffsetFor(t *testing.T) {
	var c epochCache
	if e, o := c.endOffsetFor(0, 10); e != -1 || o != -1 {
		t.Fatalf("empty cache: (%d, %d)", e, o)
	}
	c.assign(2, 6)
	c.assign(2, 8) // same epoch: no new entry
	c.assign(4, 10)
	c.assign(7, 15)
	if len(c.entries) != 3 {
		t.Fatalf("entries %v", c.entries)
	}
	logEnd := int64(20)
	cases := []struct {
		name      string
		epoch     int32
		wantEpoch int32
		wantEnd   int64
	}{
		{"undefined epoch", -1, -1, -1},
		{"below every cached epoch (KIP-279)", 1, 1, 6},
		{"first epoch", 2, 2, 10},
		{"between cached epochs: the floor epoch's end", 3, 2, 10},
		{"middle epoch", 4, 4, 15},
		{"between 4 and 7", 6, 4, 15},
		{"latest epoch: the log end", 7, 7, 20},
		{"above the latest", 8, -1, -1},
	}
	for _, tc := range cases {
		e, o := c.endOffsetFor(tc.epoch, logEnd)
		if e != tc.wantEpoch || o != tc.wantEnd {
			t.Errorf("%s: endOffsetFor(%d) = (%d, %d), want (%d, %d)", tc.name, tc.epoch, e, o, tc.wantEpoch, tc.wantEnd)
		}
	}

	c.truncateFromEnd(15)
	if c.latestEpoch() != 4 || len(c.entries) != 2 {
		t.Fatalf("truncateFromEnd(15): %v", c.entries)
	}
	c.truncateFromStart(12)
	if len(c.entries) != 1 || c.entries[0] != (EpochEntry{4, 12}) {
		t.Fatalf("truncateFromStart(12): %v", c.entries)
	}
	if e, ok := c.epochAt(11); ok {
		t.Fatalf("epochAt below the first entry = %d", e)
	}
	// A new epoch at the start of an epoch with no batches replaces it.
	c.assign(9, 12)
	if len(c.entries) != 1 || c.entries[0] != (EpochEntry{9, 12}) {
		t.Fatalf("replacing assign: %v", c.entries)
	}
	defer func() {
		if recover() == nil {
			t.Fatalf("an epoch going back did not panic")
		}
	}()
	c.assign(8, 30)
}

func TestConfigValidation(t *testing.T) {
	if err := DefaultConfig().Validate(); err != nil {
		t.Fatalf("default config: %v", err)
	}
	bad := []func(*Config){
		func(c *Config) { c.SegmentBytes = SegmentBytesMin - 1 },
		func(c *Config) { c.SegmentBytes = SegmentBytesMax + 1 },
		func(c *Config) { c.SegmentAge = 0 },
		func(c *Config) { c.RetentionBytes = -2 },
		func(c *Config) { c.RetentionAge = -2 },
		func(c *Config) { c.IndexIntervalBytes = -1 },
	}
	for i, change := range bad {
		c := DefaultConfig()
		change(&c)
		if err := c.Validate(); !errors.Is(err, ErrConfig) {
			t.Errorf("bad config %d accepted", i)
		}
	}
}
func TestFileNamesRoundTrip(t *testing.T) {
	for _, c := range []struct {
		in   int64
		want string
	}{{0, "00000000000000000000"}, {42, "00000000000000000042"}, {9223372036854775807, "09223372036854775807"}} {
		if got := baseName(c.in); got != c.want {
			t.Fatalf("%d: %s", c.in, got)
		}
		if back, ok := parseBaseName(baseName(c.in)+".log", ".log"); !ok || back != c.in {
			t.Fatalf("round trip %d", c.in)
		}
	}
}

// headerSize and headerLastOffset stand in for the header's methods in the
// read loops; they must agree with them.
func TestHeaderHelpersMatchMethods(t *testing.T) {
	for _, h := range []batch.Header{
		{BaseOffset: 0, Length: batch.HeaderSize - batch.LengthPrefixSize},
		{BaseOffset: 1234, Length: 5000, LastOffsetDelta: 41},
		{BaseOffset: 1<<62 + 3, Length: 1<<31 - 1, LastOffsetDelta: relativeOffsetMax},
	} {
		if headerSize(&h) != int64(h.Size()) || headerLastOffset(&h) != h.LastOffset() {
			t.Fatalf("%+v: size %d, last offset %d", h, headerSize(&h), headerLastOffset(&h))
		}
	}
}
