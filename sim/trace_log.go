package sim

import (
	"context"
	"log/slog"
	"strconv"

	"sluice/sim/kernel"
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
	// Built in a byte slice that starts on the stack: the note's string
	// is the one allocation.
	b := make([]byte, 0, 256)
	b = append(b, r.Level.String()...)
	b = append(b, ' ')
	b = append(b, r.Message...)
	b = append(b, h.prefix...)
	r.Attrs(func(a slog.Attr) bool {
		b = appendAttr(b, h.group, a)
		return true
	})
	h.kernel.Trace().Note(h.kernel.Now(), h.source, string(b))
	return nil
}

func (h *traceHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	next := *h
	b := make([]byte, 0, 256)
	b = append(b, h.prefix...)
	for _, a := range attrs {
		b = appendAttr(b, h.group, a)
	}
	next.prefix = string(b)
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

func appendAttr(b []byte, group string, a slog.Attr) []byte {
	b = append(b, ' ')
	if group != "" {
		b = append(b, group...)
		b = append(b, '.')
	}
	b = append(b, a.Key...)
	b = append(b, '=')
	return appendValue(b, a.Value.Resolve())
}

// appendValue appends v as v.String() reads: for numbers and booleans
// directly, which saves the string String allocates for them (core logs
// a node's ids and epochs as numbers). Every other kind goes through
// String.
func appendValue(b []byte, v slog.Value) []byte {
	switch v.Kind() {
	case slog.KindInt64:
		return strconv.AppendInt(b, v.Int64(), 10)
	case slog.KindUint64:
		return strconv.AppendUint(b, v.Uint64(), 10)
	case slog.KindFloat64:
		return strconv.AppendFloat(b, v.Float64(), 'g', -1, 64)
	case slog.KindBool:
		return strconv.AppendBool(b, v.Bool())
	}
	return append(b, v.String()...)
}
