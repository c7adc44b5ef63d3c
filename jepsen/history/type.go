package history

import "fmt"

// Type says where an op stands in an operation's life.
type Type uint8

const (
	// Invoke is the call: the client is about to ask.
	Invoke Type = iota + 1
	// OK completes an operation that certainly happened, with its results.
	OK
	// Fail completes an operation that certainly did not happen.
	Fail
	// Info completes an operation whose outcome is unknown (a timeout, a
	// lost connection): it may have happened, at any moment after its
	// invoke, or never. The process is never used again.
	Info
)

var typeNames = [...]string{Invoke: "invoke", OK: "ok", Fail: "fail", Info: "info"}

func (t Type) String() string {
	if t.valid() {
		return typeNames[t]
	}
	return fmt.Sprintf("type(%d)", uint8(t))
}

func (t Type) valid() bool { return t >= Invoke && t <= Info }

// IsCompletion reports whether t ends an operation.
func (t Type) IsCompletion() bool { return t == OK || t == Fail || t == Info }

// MarshalText writes the name, so JSON carries "ok" rather than 2.
func (t Type) MarshalText() ([]byte, error) {
	if !t.valid() {
		return nil, fmt.Errorf("history: cannot encode unknown op type %d", uint8(t))
	}
	return []byte(typeNames[t]), nil
}

// UnmarshalText reads a name written by MarshalText.
func (t *Type) UnmarshalText(text []byte) error {
	for candidate := Invoke; candidate <= Info; candidate++ {
		if typeNames[candidate] == string(text) {
			*t = candidate
			return nil
		}
	}
	return fmt.Errorf("history: unknown op type %q (want invoke, ok, fail or info)", text)
}
