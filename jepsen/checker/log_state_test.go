package checker

import (
	"fmt"
	"testing"
)

func TestLogStateReadsEveryOffsetOfEveryVersion(t *testing.T) {
	log := emptyLog()
	versions := []*logState{log}
	for i := range 300 {
		log = log.append(fmt.Sprintf("v%d", i))
		versions = append(versions, log)
	}
	for length, version := range versions {
		if version.length != int64(length) {
			t.Fatalf("version %d has length %d", length, version.length)
		}
		for offset := range length {
			if got := version.ancestor(int64(offset) + 1).value; got != fmt.Sprintf("v%d", offset) {
				t.Fatalf("version %d: offset %d holds %q", length, offset, got)
			}
		}
	}
}

func TestLogStateAncestorTakesLogarithmicSteps(t *testing.T) {
	log := emptyLog()
	for i := range 1 << 16 {
		log = log.append(fmt.Sprint(i))
	}
	for _, length := range []int64{0, 1, 2, 1000, 1 << 15, 1<<16 - 1, 1 << 16} {
		steps := 0
		for version := log; version.length > length; steps++ {
			if version.jump.length >= length {
				version = version.jump
			} else {
				version = version.previous
			}
		}
		// 3·log2(n) is a loose bound on skew-binary jumps.
		if steps > 3*16 {
			t.Errorf("reaching length %d took %d steps", length, steps)
		}
	}
}

func TestLogStateEqualityIsByContent(t *testing.T) {
	shared := emptyLog().append("a").append("b")
	left := shared.append("c").append("d")
	right := shared.append("c").append("d")
	other := shared.append("d").append("c")
	if !left.equal(right) || !right.equal(left) {
		t.Fatal("logs with the same values in the same order differ")
	}
	if left.equal(other) {
		t.Fatal("logs with values in different orders are equal")
	}
	if left.equal(left.previous) {
		t.Fatal("logs of different lengths are equal")
	}
	if shared.appendUnobserved().equal(shared.append("")) {
		t.Fatal("an unobserved value equals an empty one")
	}
	if !shared.appendUnobserved().equal(shared.appendUnobserved()) {
		t.Fatal("two unobserved values at one offset differ")
	}
	if !emptyLog().equal(emptyLog()) {
		t.Fatal("two empty logs differ")
	}
}
