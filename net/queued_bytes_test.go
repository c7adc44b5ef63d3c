package net

import (
	"sync/atomic"
	"testing"
	"time"
)

func TestQueuedBytesBlocksUntilReleased(t *testing.T) {
	q := newQueuedBytes(1000)
	if !q.reserve(600, func() bool { return false }) {
		t.Fatal("first reservation refused")
	}
	reserved := make(chan bool)
	go func() { reserved <- q.reserve(600, func() bool { return false }) }()
	select {
	case <-reserved:
		t.Fatal("a reservation beyond the budget did not wait")
	case <-time.After(50 * time.Millisecond):
	}
	q.release(600)
	if ok := <-reserved; !ok {
		t.Fatal("the waiting reservation failed after a release")
	}
}

func TestQueuedBytesWaiterStopsWhenItsConnectionEnds(t *testing.T) {
	q := newQueuedBytes(100)
	q.reserve(100, func() bool { return false })
	var ended atomic.Bool
	result := make(chan bool)
	go func() { result <- q.reserve(50, ended.Load) }()
	ended.Store(true)
	q.interrupt()
	if ok := <-result; ok {
		t.Fatal("a reservation for an ended connection succeeded")
	}
	q.close()
	if q.reserve(1, func() bool { return false }) {
		t.Fatal("a closed budget granted a reservation")
	}
}
