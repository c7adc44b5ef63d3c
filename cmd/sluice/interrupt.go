package main

import (
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

// exitInterrupted is the exit status of a command a signal stopped early,
// as a shell reports one killed by SIGINT (128 + 2): a sweep cut short is
// no pass, even when every seed it ran passed.
const exitInterrupted = 130

// stopOnInterrupt returns a channel closed at the first SIGINT or SIGTERM,
// so that a long sweep stops handing out seeds, lets the ones out finish
// and prints its summary (which seeds ran, what failed, the coverage)
// instead of dying with it. A second signal exits at once.
func stopOnInterrupt() <-chan struct{} {
	signals := make(chan os.Signal, 2)
	signal.Notify(signals, syscall.SIGINT, syscall.SIGTERM)
	stop := make(chan struct{})
	go func() {
		<-signals
		fmt.Fprintln(os.Stderr, "\nsluice sim: stopping after the seeds in flight (interrupt again to quit now)")
		close(stop)
		<-signals
		os.Exit(exitInterrupted)
	}()
	return stop
}
