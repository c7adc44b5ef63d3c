package main

import (
	"fmt"
	"log/slog"
	"os"

	"sluice/jepsen/history"
	"sluice/sim"
)

// writeHistory writes the client history one run was judged on, as JSON
// lines (jepsen/history's format, which history.Read loads back), and
// says where. It is what to grep when a check names ops: each line is one
// invoke or completion, with its index, process, time and payload.
func writeHistory(path string, result sim.Result) error {
	if result.Recording == nil {
		return fmt.Errorf("--history: this run kept no client history (the cluster and broker workloads do)")
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := history.Write(f, result.Recording.History); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if len(result.Recording.History) == 0 {
		fmt.Fprintf(os.Stderr, "history: %s is empty: the run ended before its checks\n", path)
		return nil
	}
	fmt.Fprintf(os.Stderr, "history: %s (%d ops)\n", path, len(result.Recording.History))
	return nil
}

// parseLogLevel reads --log-level: empty for the workload's own level.
func parseLogLevel(text string) (*slog.Level, error) {
	if text == "" {
		return nil, nil
	}
	var level slog.Level
	if err := level.UnmarshalText([]byte(text)); err != nil {
		return nil, fmt.Errorf("--log-level %q: want debug, info, warn or error", text)
	}
	return &level, nil
}
