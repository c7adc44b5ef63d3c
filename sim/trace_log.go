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
//
// The attributes a With adds are rendered into the line's prefix when the
// logger first handles a record, not when it is made: core makes a logger
// per component (a replica, a client connection), most of which never log
// at the level the trace keeps, and rendering their attributes up front
// was a string allocated, and values formatted, for nothing. Rendering
// later prints the same: attributes whose text could change meanwhile (any
// value that is not a plain string, number, duration or time) are rendered
// at once, as before.
type traceHandler struct {
	kernel *kernel.Kernel
	source string
	level  slog.Level
	group  string // the group of the records' attributes (WithGroup), dotted

	// parent is the handler this one was made from by With or WithGroup,
	// whose prefix comes first; nil at the root. attrs are what With
	// added here (slog hands the slice over), in attrsGroup.
	parent     *traceHandler
	attrs      []slog.Attr
	attrsGroup string
	// prefix is the rendered attributes, once rendered is set.
	prefix   string
	rendered bool
}

func newTraceHandler(k *kernel.Kernel, source string, level slog.Level) *traceHandler {
	return &traceHandler{kernel: k, source: source, level: level, rendered: true}
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
	b = append(b, h.renderedPrefix()...)
	r.Attrs(func(a slog.Attr) bool {
		b = appendAttr(b, h.group, a)
		return true
	})
	h.kernel.Trace().Note(h.kernel.Now(), h.source, string(b))
	return nil
}

// renderedPrefix is the handler's prefix: its parent's, then its own
// attributes, rendered at the first call.
func (h *traceHandler) renderedPrefix() string {
	if !h.rendered {
		h.prefix = string(h.appendPrefix(make([]byte, 0, 256)))
		h.rendered, h.parent, h.attrs = true, nil, nil
	}
	return h.prefix
}

// appendPrefix appends the handler's prefix to b.
func (h *traceHandler) appendPrefix(b []byte) []byte {
	if h.rendered {
		return append(b, h.prefix...)
	}
	if h.parent != nil {
		b = h.parent.appendPrefix(b)
	}
	for _, a := range h.attrs {
		b = appendAttr(b, h.attrsGroup, a)
	}
	return b
}

func (h *traceHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	next := &traceHandler{kernel: h.kernel, source: h.source, level: h.level, group: h.group,
		parent: h, attrs: attrs, attrsGroup: h.group}
	for _, a := range attrs {
		switch a.Value.Kind() {
		case slog.KindAny, slog.KindLogValuer, slog.KindGroup:
			next.renderedPrefix() // what it prints may change: now
			return next
		}
	}
	return next
}

func (h *traceHandler) WithGroup(name string) slog.Handler {
	next := &traceHandler{kernel: h.kernel, source: h.source, level: h.level, group: h.group, parent: h}
	if next.group != "" {
		next.group += "."
	}
	next.group += name
	return next
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
