package main

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// clientWarnings prints the Kafka client's warnings and errors to stderr,
// as Kafka's console tools log theirs: a broker that cannot be reached
// ("unable to open connection to broker"), a group join that failed. Without
// them `sluice consume` against a broker that is down waits in silence.
func clientWarnings(command string) *repeatQuietLogger {
	return newRepeatQuietLogger(os.Stderr, "sluice "+command+": ", warningRepeatEvery, time.Now)
}

// warningRepeatEvery is how often one warning is printed again while it keeps
// coming: a client retrying a broker that is down warns on every dial, a few
// times a second, which buries the one line that says what is wrong.
const warningRepeatEvery = 10 * time.Second

// warningKindsMax bounds the warnings remembered for quieting; past it the
// memory starts over, which at worst prints a repeat early.
const warningKindsMax = 256

// volatileWarningKeys are the key-values that change on every repeat of the
// same warning (the retry count, the backoff drawn); two warnings that differ
// only in them are the same warning.
var volatileWarningKeys = map[string]bool{"backoff": true, "consecutive_errors": true}

// repeatQuietLogger is a kgo.Logger that prints in kgo.BasicLogger's format
// but prints a warning it printed less than every ago only as a count, on its
// next showing.
type repeatQuietLogger struct {
	out    io.Writer
	prefix string
	every  time.Duration
	now    func() time.Time

	mu   sync.Mutex // kgo logs from its own goroutines
	seen map[string]*warningSeen
}

type warningSeen struct {
	printed    time.Time
	suppressed int
}

func newRepeatQuietLogger(out io.Writer, prefix string, every time.Duration, now func() time.Time) *repeatQuietLogger {
	return &repeatQuietLogger{out: out, prefix: prefix, every: every, now: now, seen: make(map[string]*warningSeen)}
}

func (l *repeatQuietLogger) Level() kgo.LogLevel { return kgo.LogLevelWarn }

func (l *repeatQuietLogger) Log(level kgo.LogLevel, msg string, keyvals ...any) {
	if level > kgo.LogLevelWarn {
		return
	}
	l.say(formatWarning(level, msg, keyvals, true), formatWarning(level, msg, keyvals, false))
}

// Say prints a line of the command's own the way the client's warnings are
// printed, quieted when it repeats.
func (l *repeatQuietLogger) Say(line string) { l.say(line, line) }

// say prints line unless a line of the same kind was printed less than every
// ago, in which case it counts it.
func (l *repeatQuietLogger) say(kind, line string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	seen := l.seen[kind]
	if seen != nil && now.Sub(seen.printed) < l.every {
		seen.suppressed++
		return
	}
	if seen == nil {
		if len(l.seen) >= warningKindsMax {
			clear(l.seen)
		}
		seen = &warningSeen{}
		l.seen[kind] = seen
	}
	if seen.suppressed > 0 {
		line += fmt.Sprintf(" (and %d more like it in the last %s)", seen.suppressed, now.Sub(seen.printed).Round(time.Second))
	}
	seen.printed, seen.suppressed = now, 0
	fmt.Fprintf(l.out, "%s%s\n", l.prefix, line)
}

// formatWarning writes a log call as kgo.BasicLogger does: "[WARN] msg; k: v,
// k: v". Without the volatile key-values it names the warning's kind.
func formatWarning(level kgo.LogLevel, msg string, keyvals []any, kindOnly bool) string {
	var b strings.Builder
	fmt.Fprintf(&b, "[%s] %s", level, msg)
	separator := "; "
	for i := 0; i+1 < len(keyvals); i += 2 {
		if key, ok := keyvals[i].(string); ok && kindOnly && volatileWarningKeys[key] {
			continue
		}
		fmt.Fprintf(&b, "%s%v: %v", separator, keyvals[i], keyvals[i+1])
		separator = ", "
	}
	return b.String()
}
