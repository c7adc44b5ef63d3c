package loop

import (
	"fmt"
	"sync"
	"testing"
)

func TestPostsFromOneGoroutineRunInOrder(t *testing.T) {
	const posts = 10_000
	l := startLoop(t, 16) // small, so the poster keeps waiting for room
	var ran []int         // loop only
	for i := range posts {
		if !l.Post(func() { ran = append(ran, i) }) {
			t.Fatalf("post %d refused", i)
		}
	}
	// onLoop's close happens after everything posted before it ran, so
	// the test goroutine may read ran once it returns.
	onLoop(t, l, func() {})
	if len(ran) != posts {
		t.Fatalf("ran %d functions, want %d", len(ran), posts)
	}
	for i, got := range ran {
		if got != i {
			t.Fatalf("position %d ran post %d", i, got)
		}
	}
}

func TestPostsFromManyGoroutinesKeepEachGoroutinesOrder(t *testing.T) {
	const goroutines, posts = 8, 2_000
	l := startLoop(t, 4)
	ran := make([][]int, goroutines) // loop only
	var posters sync.WaitGroup
	for g := range goroutines {
		posters.Go(func() {
			for i := range posts {
				if !l.Post(func() { ran[g] = append(ran[g], i) }) {
					panic(fmt.Sprintf("goroutine %d: post %d refused", g, i))
				}
			}
		})
	}
	posters.Wait()
	onLoop(t, l, func() {})
	for g, sequence := range ran {
		if len(sequence) != posts {
			t.Fatalf("goroutine %d: ran %d functions, want %d", g, len(sequence), posts)
		}
		for i, got := range sequence {
			if got != i {
				t.Fatalf("goroutine %d: position %d ran post %d", g, i, got)
			}
		}
	}
}

// The loop posting to itself while its inbox is full must neither wait (it
// would wait for itself forever) nor overtake what it posted earlier.
func TestPostFromTheLoopWithAFullInboxDoesNotDeadlockAndKeepsOrder(t *testing.T) {
	const inboxMax, selfPosts = 4, 1_000
	l := startLoop(t, inboxMax)
	var ran []string // loop only
	release := make(chan struct{})
	blocked := make(chan struct{})
	l.Post(func() {
		close(blocked)
		<-release
		// The inbox is full of the test goroutine's posts. Post to self,
		// through the inbox or not, many times.
		for i := range selfPosts {
			if !l.Post(func() { ran = append(ran, fmt.Sprint("self ", i)) }) {
				panic("a post from the loop was refused")
			}
		}
	})
	receive(t, blocked, "the loop to block")
	for i := range inboxMax {
		l.Post(func() { ran = append(ran, fmt.Sprint("outside ", i)) })
	}
	if len(l.inbox) != inboxMax {
		t.Fatalf("inbox holds %d, want it full at %d", len(l.inbox), inboxMax)
	}
	close(release)
	onLoop(t, l, func() {})
	var want []string
	for i := range inboxMax {
		want = append(want, fmt.Sprint("outside ", i))
	}
	for i := range selfPosts {
		want = append(want, fmt.Sprint("self ", i))
	}
	if fmt.Sprint(ran) != fmt.Sprint(want) {
		t.Fatalf("order:\n got %v\nwant %v", ran, want)
	}
}

// A function the loop posts to itself while the inbox is full waits for
// the inbox functions ahead of it, even when later self-posts take the
// inbox again.
func TestDeferredPostsRunAfterEarlierInboxPostsOfTheLoop(t *testing.T) {
	const inboxMax = 3
	l := startLoop(t, inboxMax)
	var ran []string // loop only
	record := func(name string) func() { return func() { ran = append(ran, name) } }
	onLoop(t, l, func() {
		l.Post(record("a")) // inbox
		l.Post(record("b")) // inbox, now holding two
		// The inbox takes a third, then is full.
		l.Post(record("c"))
		l.Post(record("d")) // deferred behind a, b, c
		l.Post(record("e")) // deferred
	})
	// The next marker enters the inbox behind c, so it runs after e.
	onLoop(t, l, func() {})
	if got, want := fmt.Sprint(ran), "[a b c d e]"; got != want {
		t.Fatalf("ran %s, want %s", got, want)
	}
}

func TestStopReleasesWaitingPostsAndRefusesLaterOnes(t *testing.T) {
	l := New(1)
	returned := make(chan struct{})
	blocked := make(chan struct{})
	release := make(chan struct{})
	go func() { l.Run(); close(returned) }()
	l.Post(func() { close(blocked); <-release })
	receive(t, blocked, "the loop to block")
	ranAfterStop := make(chan struct{}, 2)
	l.Post(func() { ranAfterStop <- struct{}{} }) // fills the inbox
	waiter := make(chan bool)
	go func() { waiter <- l.Post(func() { ranAfterStop <- struct{}{} }) }()
	l.Stop()
	if receive(t, waiter, "the waiting Post to return") {
		t.Error("a Post waiting when Stop was called reported true")
	}
	close(release)
	receive(t, returned, "Run to return")
	if l.Post(func() {}) {
		t.Error("Post after Stop reported true")
	}
	if len(ranAfterStop) != 0 {
		t.Errorf("%d queued functions ran after Stop", len(ranAfterStop))
	}
	l.Stop() // a second Stop is harmless
}

func TestStopFromInsideTheLoop(t *testing.T) {
	l := New(8)
	returned := make(chan struct{})
	go func() { l.Run(); close(returned) }()
	ranAfter := false
	l.Post(func() {
		l.Stop()
		if l.Post(func() {}) {
			panic("Post from the loop after Stop reported true")
		}
	})
	l.Post(func() { ranAfter = true })
	receive(t, returned, "Run to return")
	if ranAfter {
		t.Error("a function queued behind Stop ran")
	}
}

func TestRunTwicePanics(t *testing.T) {
	l := startLoop(t, 1)
	onLoop(t, l, func() {}) // Run has started
	defer func() {
		if recover() == nil {
			t.Error("a second Run did not panic")
		}
	}()
	l.Run()
}

func TestNewRejectsAnEmptyInbox(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("New(0) did not panic")
		}
	}()
	New(0)
}

func TestCurrentGoroutineIDTellsGoroutinesApart(t *testing.T) {
	here := currentGoroutineID()
	if currentGoroutineID() != here {
		t.Fatal("the same goroutine got two numbers")
	}
	there := make(chan uint64)
	go func() { there <- currentGoroutineID() }()
	if other := <-there; other == here {
		t.Fatalf("two goroutines share number %d", here)
	}
}
