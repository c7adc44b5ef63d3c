package main

import (
	"flag"
	"fmt"
	"math"
	"os"
)

// parseAnyOrder parses flags that may come before, between or after the
// positional arguments (`topic create orders --partitions 3`), as Kafka's
// tools take them; Go's flag package stops at the first positional one and
// would leave the rest, flags included, as positional. It returns the
// positional arguments in order. A word starting with "-" is always a
// flag, so no topic can be named "--partitions" by mistake.
func parseAnyOrder(flags *flag.FlagSet, args []string) ([]string, error) {
	var positional []string
	for {
		if err := flags.Parse(args); err != nil {
			return nil, err
		}
		rest := flags.Args()
		if len(rest) == 0 {
			return positional, nil
		}
		if rest[0] == "--" {
			return append(positional, rest[1:]...), nil
		}
		positional = append(positional, rest[0])
		args = rest[1:]
	}
}

// noPositional refuses positional arguments a command takes none of.
func noPositional(command string, args []string) bool {
	if len(args) > 0 {
		fmt.Fprintf(os.Stderr, "sluice %s: unexpected argument %q (flags are --name value)\n", command, args[0])
		return false
	}
	return true
}

// int32Flag checks an int flag that goes into an int32 field: -1 (the
// default) or 1 to 2^31-1.
func int32Flag(name string, value int) (int32, error) {
	if value != -1 && (value < 1 || value > math.MaxInt32) {
		return 0, fmt.Errorf("--%s %d: want -1 (the broker's default) or 1 to %d", name, value, math.MaxInt32)
	}
	return int32(value), nil
}

// int16Flag is int32Flag for an int16 field.
func int16Flag(name string, value int) (int16, error) {
	if value != -1 && (value < 1 || value > math.MaxInt16) {
		return 0, fmt.Errorf("--%s %d: want -1 (the broker's default) or 1 to %d", name, value, math.MaxInt16)
	}
	return int16(value), nil
}
