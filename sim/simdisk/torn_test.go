package simdisk

import (
	"bytes"
	"fmt"
	"testing"

	"pgregory.net/rapid"
)

// pendingOperation is one write or truncate a torn-crash test makes after
// the last sync.
type pendingOperation struct {
	truncate bool
	offset   int64
	bytes    []byte
	size     int64
}

func (op pendingOperation) String() string {
	if op.truncate {
		return fmt.Sprintf("truncate(%d)", op.size)
	}
	return fmt.Sprintf("write(%d, %q)", op.offset, op.bytes)
}

// applyPending is the specification of one operation on an image.
func applyPending(image []byte, op pendingOperation) []byte {
	image = bytes.Clone(image)
	if op.truncate {
		if op.size <= int64(len(image)) {
			return image[:op.size]
		}
		return append(image, make([]byte, op.size-int64(len(image)))...)
	}
	if end := op.offset + int64(len(op.bytes)); end > int64(len(image)) {
		image = append(image, make([]byte, end-int64(len(image)))...)
	}
	copy(image[op.offset:], op.bytes)
	return image
}

// tornOutcomes lists every image a crash may leave, per the package's
// model: the durable image plus an in-order prefix of the pending
// operations, the last of which, if a write, may keep only its first k
// bytes with the rest of its range absent or zeros.
func tornOutcomes(durable []byte, pending []pendingOperation) [][]byte {
	outcomes := [][]byte{durable}
	image := durable
	for _, op := range pending {
		if !op.truncate {
			for k := range len(op.bytes) {
				absent := pendingOperation{offset: op.offset, bytes: op.bytes[:k]}
				if k > 0 {
					outcomes = append(outcomes, applyPending(image, absent))
				}
				zeros := applyPending(image, pendingOperation{offset: op.offset, bytes: make([]byte, len(op.bytes))})
				// Inside the old size the old bytes remain; the hole is
				// only past it.
				copy(zeros, image[:min(len(image), len(zeros))])
				copy(zeros[op.offset:], op.bytes[:k])
				outcomes = append(outcomes, zeros)
			}
		}
		image = applyPending(image, op)
		outcomes = append(outcomes, image)
	}
	return outcomes
}

func TestTornCrashKeepsAnInOrderPrefix(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		seed := rapid.Uint64().Draw(rt, "seed")
		d, k, process := newTestDisk(seed, Faults{TornWrite: 1})
		f := createFile(rt, d, "log")
		mustSyncDirectory(rt, k, d, ".")
		base := rapid.SliceOfN(rapid.Byte(), 0, 16).Draw(rt, "base")
		write(rt, f, 0, string(base))
		mustSync(rt, k, f)

		operation := rapid.Custom(func(rt *rapid.T) pendingOperation {
			if rapid.IntRange(0, 4).Draw(rt, "kind") == 0 {
				return pendingOperation{truncate: true, size: rapid.Int64Range(0, 32).Draw(rt, "size")}
			}
			return pendingOperation{
				offset: rapid.Int64Range(0, 24).Draw(rt, "offset"),
				bytes:  rapid.SliceOfN(rapid.ByteRange(1, 255), 1, 8).Draw(rt, "bytes"),
			}
		})
		pending := rapid.SliceOfN(operation, 0, 6).Draw(rt, "pending")
		for _, op := range pending {
			if op.truncate {
				if err := f.Truncate(op.size); err != nil {
					rt.Fatal(err)
				}
			} else {
				write(rt, f, op.offset, string(op.bytes))
			}
		}

		crash(d, process)
		got, ok := readFile(rt, d, "log")
		if !ok {
			rt.Fatal("a synced file vanished in a torn crash")
		}
		for _, outcome := range tornOutcomes(base, pending) {
			if bytes.Equal(outcome, []byte(got)) {
				return
			}
		}
		rt.Fatalf("after a torn crash log = %q; not the synced %q plus an in-order prefix of %v", got, base, pending)
	})
}

// TestTornWriteShowsEveryShape checks that torn crashes produce each shape
// the model allows, so the property test above is not passing vacuously.
func TestTornWriteShowsEveryShape(t *testing.T) {
	const payload = "abcdefgh"
	shapes := map[string]int{}
	for seed := range uint64(400) {
		d, k, process := newTestDisk(seed, Faults{TornWrite: 1})
		f := createFile(t, d, "log")
		mustSyncDirectory(t, k, d, ".")
		write(t, f, 0, payload)
		crash(d, process)
		got, _ := readFile(t, d, "log")
		switch {
		case got == "":
			shapes["nothing"]++
		case got == payload:
			shapes["whole"]++
		case len(got) < len(payload) && payload[:len(got)] == got:
			shapes["prefix, rest absent"]++
		case len(got) == len(payload) && bytes.HasSuffix([]byte(got), []byte{0}):
			shapes["prefix, rest zeros"]++
		default:
			t.Fatalf("seed %d: torn write left %q", seed, got)
		}
	}
	for _, shape := range []string{"nothing", "whole", "prefix, rest absent", "prefix, rest zeros"} {
		if shapes[shape] == 0 {
			t.Errorf("no crash in 400 left %q; saw %v", shape, shapes)
		}
	}
}
