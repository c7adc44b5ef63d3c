package quorumworkload

import (
	"fmt"
	"sort"
)

// checker holds what every node reported against one committed history.
type checker struct {
	run *run
	// values is the committed sequence as far as anyone has shown it: the
	// value at each offset that holds a record. valueOffsets is the
	// reverse (values are unique, so a value at two offsets is a
	// duplicate).
	values       map[int64]string
	valueOffsets map[string]int64
	// acknowledged are the records whose proposal succeeded.
	acknowledged map[int64]string
	// leaders is the leader of each epoch that had one.
	leaders map[int32]int32
}

func newChecker(r *run) *checker {
	return &checker{
		run:          r,
		values:       map[int64]string{},
		valueOffsets: map[string]int64{},
		acknowledged: map[int64]string{},
		leaders:      map[int32]int32{},
	}
}

// committed takes a record someone showed committed at offset: delivered
// it, restored it, or had its proposal acknowledged.
func (c *checker) committed(offset int64, value, source string) {
	if known, ok := c.values[offset]; ok && known != value {
		c.run.fail("agreement", fmt.Sprintf("offset %d holds %s, but %s shows %s", offset, known, source, value))
		return
	}
	if known, ok := c.valueOffsets[value]; ok && known != offset {
		c.run.fail("agreement", fmt.Sprintf("%s is committed at offset %d and, %s, at %d", value, known, source, offset))
		return
	}
	c.values[offset] = value
	c.valueOffsets[value] = offset
}

// leading takes a node's report that it leads epoch.
func (c *checker) leading(epoch, id int32) {
	if known, ok := c.leaders[epoch]; ok && known != id {
		c.run.fail("leaders", fmt.Sprintf("nodes %d and %d both led epoch %d", known, id, epoch))
		return
	}
	c.leaders[epoch] = id
	c.run.counts.leaders++
}

// sequence is the committed offsets, in order.
func (c *checker) sequence() []int64 {
	offsets := make([]int64, 0, len(c.values))
	for offset := range c.values {
		offsets = append(offsets, offset)
	}
	sort.Slice(offsets, func(i, j int) bool { return offsets[i] < offsets[j] })
	return offsets
}

// checkStates holds every node process's state, alive or long crashed,
// against the committed sequence: each must be a prefix of it (in order,
// nothing skipped).
func (c *checker) checkStates() {
	sequence := c.sequence()
	for _, s := range c.run.states {
		for i, e := range s.entries {
			if i >= len(sequence) || sequence[i] != e.offset {
				want := "nothing"
				if i < len(sequence) {
					want = fmt.Sprintf("offset %d", sequence[i])
				}
				c.run.fail("order", fmt.Sprintf("node %d (lifetime %d) has offset %d as its record #%d; the committed sequence has %s there", s.node, s.lifetime, e.offset, i, want))
				return
			}
		}
	}
}

// checkDurable requires every acknowledged record on every node.
func (c *checker) checkDurable() {
	var offsets []int64
	for offset := range c.acknowledged {
		offsets = append(offsets, offset)
	}
	sort.Slice(offsets, func(i, j int) bool { return offsets[i] < offsets[j] })
	for _, n := range c.run.nodes {
		have := map[int64]string{}
		for _, e := range n.state.entries {
			have[e.offset] = e.value
		}
		for _, offset := range offsets {
			if have[offset] != c.acknowledged[offset] {
				c.run.fail("durability", fmt.Sprintf("node %d lost acknowledged %s at offset %d (has %q)", n.id, c.acknowledged[offset], offset, have[offset]))
				return
			}
		}
	}
}
