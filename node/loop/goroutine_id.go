package loop

import (
	"bytes"
	"fmt"
	"runtime"
	"strconv"
)

// goroutineHeaderBytes is enough of a stack trace to hold its first words,
// "goroutine 123456789 [running]:".
const goroutineHeaderBytes = 64

// currentGoroutineID returns the runtime's number for the calling goroutine.
//
// Go has no public API for it; the first line of runtime.Stack is the one
// stable place it appears. It costs a stack walk (microseconds), which is
// why Post only asks when the inbox is full: the one moment it must know
// whether the caller is the loop itself.
func currentGoroutineID() uint64 {
	var buffer [goroutineHeaderBytes]byte
	header := buffer[:runtime.Stack(buffer[:], false)]
	rest, found := bytes.CutPrefix(header, []byte("goroutine "))
	if !found {
		panic(fmt.Sprintf("loop: unexpected stack header %q", header))
	}
	number, _, found := bytes.Cut(rest, []byte(" "))
	if !found {
		panic(fmt.Sprintf("loop: unexpected stack header %q", header))
	}
	id, err := strconv.ParseUint(string(number), 10, 64)
	if err != nil || id == 0 {
		panic(fmt.Sprintf("loop: unexpected goroutine number in stack header %q", header))
	}
	return id
}
