package sim

import (
	"context"
	"log/slog"
	"sluice/sim/kernel"
	"strings"
)

// traceHandler turns what core logs into trace notes, stamped with virtual
// time and without slog's wall-clock time, so logs are part of what a seed
// reproduces.
type traceHandler struct {
	kernel *kernel.Kernel
	source string
	level  slog.Level
	prefix string // pre-rendered attributes from With
	group  string
}

func newTraceHandler(k *kernel.Kernel, source string, level slog.Level) *traceHandler {
	return &traceHandler{kernel: k, source: source, level: level}
}

func (h *traceHandler) Enabled(_ context.Context, level slog.Level) bool {
	return level >= h.level
}

func (h *traceHandler) Handle(_ context.Context, r slog.Record) error {
	var b strings.Builder
	b.WriteString(r.Level.String())
	b.WriteByte(' ')
	b.WriteString(r.Message)
	b.WriteString(h.prefix)
	r.Attrs(func(a slog.Attr) bool {
		appendAttr(&b, h.group, a)
		return true
	})
	h.kernel.Trace().Note(h.kernel.Now(), h.source, b.String())
	return nil
}

func (h *traceHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	next := *h
	var b strings.Builder
	b.WriteString(h.prefix)
	for _, a := range attrs {
		appendAttr(&b, h.group, a)
	}
	next.prefix = b.String()
	return &next
}

func (h *traceHandler) WithGroup(name string) slog.Handler {
	next := *h
	if next.group != "" {
		next.group += "."
	}
	next.group += name
	return &next
}

func appendAttr(b *strings.Builder, group string, a slog.Attr) {
	b.WriteByte(' ')
	if group != "" {
		b.WriteString(group)
		b.WriteByte('.')
	}
	b.WriteString(a.Key)
	b.WriteByte('=')
	b.WriteString(a.Value.Resolve().String())
}
