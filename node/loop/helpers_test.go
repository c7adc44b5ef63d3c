package loop

import (
	"runtime"
	"testing"
	"time"
)

// testDeadline bounds every wait in these tests. It is a guard against a
// hang, never a timing assertion: a healthy run waits microseconds.
const testDeadline = 10 * time.Second

// startLoop runs a new loop on its own goroutine until the test ends.
func startLoop(t *testing.T, inboxMax int) *Loop {
	t.Helper()
	l := New(inboxMax)
	returned := make(chan struct{})
	go func() {
		l.Run()
		close(returned)
	}()
	t.Cleanup(func() {
		l.Stop()
		receive(t, returned, "Run to return after Stop")
	})
	return l
}

// onLoop runs f on the loop and waits until it has run.
func onLoop(t *testing.T, l *Loop, f func()) {
	t.Helper()
	done := make(chan struct{})
	if !l.Post(func() { f(); close(done) }) {
		t.Fatal("Post returned false on a running loop")
	}
	receive(t, done, "a posted function to run")
}

// receive waits for c to be closed or to yield a value.
func receive[T any](t *testing.T, c <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-c:
		return v
	case <-time.After(testDeadline):
		t.Fatalf("timed out after %v waiting for %s", testDeadline, what)
		panic("unreachable")
	}
}

// pollUntil polls condition until it holds, yielding the processor between
// polls, and reports false if testDeadline passes first. It is for states no
// channel announces, and is safe on any goroutine (it never calls t.Fatal).
func pollUntil(condition func() bool) bool {
	deadline := time.Now().Add(testDeadline)
	for !condition() {
		if time.Now().After(deadline) {
			return false
		}
		runtime.Gosched()
	}
	return true
}
