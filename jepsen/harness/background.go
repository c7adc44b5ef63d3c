package harness

import (
	"context"
	"sync"
)

// background runs one operator's loop (deleter, recreator, elector,
// alterer) on a goroutine of its own until its context ends; wait returns
// once the loop has.
type background struct {
	running sync.WaitGroup
}

func (b *background) start(ctx context.Context, run func(context.Context)) {
	b.running.Add(1)
	go func() {
		defer b.running.Done()
		run(ctx)
	}()
}

func (b *background) wait() { b.running.Wait() }
