package main

import (
	"errors"
	"fmt"
	"log/slog"
	stdnet "net"
	"net/http"
	"net/http/pprof"
	"runtime"
)

// pprofMutexProfileFraction and pprofBlockProfileRate switch on the mutex
// and block profiles when a profiling endpoint is asked for: they cost a
// little on every contended lock and blocking operation, which a node that
// is being profiled can afford and a node that is not should not pay.
const (
	pprofMutexProfileFraction = 100
	pprofBlockProfileRate     = 10_000 // nanoseconds: one sample per 10 µs blocked
)

// startProfiling serves Go's profiles (net/http/pprof: /debug/pprof/profile
// for CPU, /debug/pprof/allocs, /debug/pprof/heap, /debug/pprof/mutex,
// /debug/pprof/block, /debug/pprof/goroutine) on address, on a server of its
// own, so that the broker's listeners never see it. It is for measuring a
// node under load (`go tool pprof http://ADDRESS/debug/pprof/profile`); bind
// it to loopback, as it has no authentication.
func startProfiling(address string, log *slog.Logger) error {
	listener, err := stdnet.Listen("tcp", address)
	if err != nil {
		return fmt.Errorf("--pprof %q: %w", address, err)
	}
	runtime.SetMutexProfileFraction(pprofMutexProfileFraction)
	runtime.SetBlockProfileRate(pprofBlockProfileRate)
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	go func() {
		err := http.Serve(listener, mux)
		if err != nil && !errors.Is(err, stdnet.ErrClosed) {
			log.Warn("profiling endpoint stopped", "error", err)
		}
	}()
	log.Info("profiling endpoint listening", "address", listener.Addr().String())
	return nil
}
