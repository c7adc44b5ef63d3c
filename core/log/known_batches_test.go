package log_test

import (
	"bytes"
	"fmt"
	"testing"

	"sluice/core"
	"sluice/core/batch"
	"sluice/core/log"
	"sluice/sim/simdisk"
)

// TestKnownBatchesChangeNoRead: a Read need not check again the batches
// before its offset that an earlier Read checked, when it finds them byte
// for byte (see knownBatches), but everything else must stay as it was:
// the same reads of the file, of the same sizes, and the same answers, also
// when bits flip in flight inside the batches it skips, and while the log
// grows under the reads (an append adds to the known batches), now and
// then past a gap. The same appends and reads run twice, once forgetting
// the known batches before every read; the reads each run makes, and what
// each Read answers, must agree.
func TestKnownBatchesChangeNoRead(t *testing.T) {
	run := func(forget bool) (reads []string, answers []string) {
		h := newHarness(t, 7, simdisk.Faults{})
		config := log.DefaultConfig()
		config.IndexIntervalBytes = 512
		l := h.open(config)
		for i := range 120 {
			mustAppend(t, l, makeBatch(1+i%3, 20+i%50, h.nowMilliseconds()), 1)
		}
		h.syncAll(l)
		if err := l.Close(); err != nil {
			t.Fatal(err)
		}
		w := h.world()
		flipping := &everyNthFlipFS{FS: w.FS, every: 2}
		w.FS = flipping
		l, err := log.Open(w, testDir, config)
		if err != nil {
			t.Fatal(err)
		}
		flipping.reads = nil // only the Reads' reads
		read := func(offset int64, maxBytes int) {
			if forget {
				log.ForgetKnownBatches(l)
			}
			got, err := l.Read(offset, l.EndOffset(), maxBytes, true)
			answers = append(answers, fmt.Sprintf("%d: %x %v", offset, got, err))
		}
		for i := range 600 {
			// Runs of reads near one another, as fetches of one
			// partition make: later reads of a run start at the same
			// index entry, some before and some after the earlier.
			base := int64(i/6*37) % l.EndOffset()
			if i/6%4 == 0 {
				base = l.EndOffset() - 8
			}
			read(min(base+int64((i*5)%8), l.EndOffset()-1), 1+i%700)
		}
		// The log grows under the reads of two followers, as a leader's
		// does, now and then past a gap, as a compacted leader's batches
		// reach a follower.
		followers := [2]int64{l.EndOffset() - 3, l.EndOffset()}
		flipping.every = 9 // fewer flips: most reads find the known batches
		for i := range 300 {
			b := makeBatch(1+i%3, 20+i%40, h.nowMilliseconds())
			gap := int64(0)
			if i%7 == 0 {
				gap = 2
			}
			batch.SetBaseOffset(b, l.EndOffset()+gap)
			batch.SetLeaderEpoch(b, 1)
			if _, err := l.AppendReplicated(b); err != nil {
				t.Fatal(err)
			}
			for f := range followers {
				if (i+f)%3 != 0 {
					read(followers[f], 1<<20)
					followers[f] = l.EndOffset()
				}
			}
		}
		if flipping.flips == 0 {
			t.Fatal("no bit flipped: the test does not test what it says")
		}
		return flipping.reads, answers
	}
	readsKnown, answersKnown := run(false)
	readsForgetting, answersForgetting := run(true)
	for i := range min(len(answersKnown), len(answersForgetting)) {
		if answersKnown[i] != answersForgetting[i] {
			t.Fatalf("read %d answered differently:\nwith known batches: %.200s\nchecking every one: %.200s", i, answersKnown[i], answersForgetting[i])
		}
	}
	for i := range min(len(readsKnown), len(readsForgetting)) {
		if readsKnown[i] != readsForgetting[i] {
			t.Fatalf("file read %d differs: %s with known batches, %s checking every batch", i, readsKnown[i], readsForgetting[i])
		}
	}
	if len(readsKnown) != len(readsForgetting) {
		t.Fatalf("%d file reads with known batches, %d checking every batch", len(readsKnown), len(readsForgetting))
	}
}

// everyNthFlipFS flips one bit in every every-th read of a segment file, in
// flight (the file is fine), and records every read.
type everyNthFlipFS struct {
	core.FS
	every int
	reads []string
	flips int
}

func (f *everyNthFlipFS) OpenFile(name string, create bool) (core.File, error) {
	file, err := f.FS.OpenFile(name, create)
	if err != nil || !bytes.HasSuffix([]byte(name), []byte(".log")) {
		return file, err
	}
	return &everyNthFlipFile{File: file, fs: f}, nil
}

type everyNthFlipFile struct {
	core.File
	fs *everyNthFlipFS
}

func (f *everyNthFlipFile) ReadAt(p []byte, offset int64) (int, error) {
	n, err := f.File.ReadAt(p, offset)
	f.fs.reads = append(f.fs.reads, fmt.Sprintf("%d+%d", offset, len(p)))
	if len(f.fs.reads)%f.fs.every == 0 && n > 0 {
		at := (len(f.fs.reads) * 7919) % n
		p[at] ^= 1 << (len(f.fs.reads) % 8)
		f.fs.flips++
	}
	return n, err
}
