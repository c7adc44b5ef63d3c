package loop

import "testing"

// BenchmarkPost measures a function's trip from another goroutine through
// the inbox to the loop, against a bare buffered channel drained by a
// goroutine doing the same work: the ratio is the loop's overhead.
func BenchmarkPost(b *testing.B) {
	const inboxMax = 1024
	b.Run("loop", func(b *testing.B) {
		l := New(inboxMax)
		returned := make(chan struct{})
		go func() { l.Run(); close(returned) }()
		count := 0 // loop only
		done := make(chan struct{})
		total := b.N
		increment := func() {
			count++
			if count == total {
				close(done)
			}
		}
		for b.Loop() {
			l.Post(increment)
		}
		<-done
		l.Stop()
		<-returned
	})
	b.Run("channel", func(b *testing.B) {
		inbox := make(chan func(), inboxMax)
		returned := make(chan struct{})
		go func() {
			for f := range inbox {
				f()
			}
			close(returned)
		}()
		count := 0
		done := make(chan struct{})
		total := b.N
		increment := func() {
			count++
			if count == total {
				close(done)
			}
		}
		for b.Loop() {
			inbox <- increment
		}
		<-done
		close(inbox)
		<-returned
	})
}
