package ports

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
)

// Bounds of the range ports are picked from: the spanPorts ports below
// the ephemeral range, never below lowestPort; tries bounds the picks.
const (
	spanPorts           = 12000
	lowestPort          = 10000
	ephemeralLowDefault = 32768 // Linux's default ip_local_port_range start
	tries               = 200
	ephemeralRangeFile  = "/proc/sys/net/ipv4/ip_local_port_range"
)

var picked = struct {
	sync.Mutex
	ports map[int]bool // handed out by this process: never twice
	// claims keeps the lock file of every port handed out open, so that
	// no other process picks the port while this one lives (claim).
	claims []*os.File
}{ports: map[int]bool{}}

// Loopback returns "127.0.0.1:port" for a port below the ephemeral range
// that was free when it was picked, that this process has not handed out
// before, and that no other live process has claimed (it is now this
// process's, until it exits). Where no such range exists it falls back
// to a port the kernel picks.
func Loopback() (string, error) {
	low, high, ok := pickRange()
	if !ok {
		return kernelPicked()
	}
	picked.Lock()
	defer picked.Unlock()
	for range tries {
		port := low + rand.IntN(high-low+1)
		if picked.ports[port] {
			continue
		}
		claimed, free, err := claim(port)
		if err != nil {
			return "", err
		}
		if !free {
			continue // another test process handed it out
		}
		listener, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(port))
		if err != nil {
			if claimed != nil {
				claimed.Close()
			}
			continue // taken
		}
		address := listener.Addr().String()
		if err := listener.Close(); err != nil {
			return "", fmt.Errorf("ports: releasing %s: %w", address, err)
		}
		picked.ports[port] = true
		if claimed != nil {
			picked.claims = append(picked.claims, claimed)
		}
		return address, nil
	}
	return "", fmt.Errorf("ports: no free loopback port in [%d, %d] after %d tries", low, high, tries)
}

// pickRange is the range below the ephemeral one.
func pickRange() (low, high int, ok bool) {
	ephemeralLow := ephemeralLowDefault
	if data, err := os.ReadFile(ephemeralRangeFile); err == nil {
		if parsed, err := parseEphemeralLow(string(data)); err == nil {
			ephemeralLow = parsed
		}
	}
	high = ephemeralLow - 1
	low = max(high-spanPorts+1, lowestPort)
	return low, high, high-low >= spanPorts/4
}

// parseEphemeralLow reads the first number of ip_local_port_range
// ("32768\t60999\n").
func parseEphemeralLow(text string) (int, error) {
	fields := strings.Fields(text)
	if len(fields) != 2 {
		return 0, errors.New("ports: ip_local_port_range is not two numbers")
	}
	return strconv.Atoi(fields[0])
}

// kernelPicked is a port the kernel says is free now.
func kernelPicked() (string, error) {
	listener, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", fmt.Errorf("ports: listening on loopback: %w", err)
	}
	address := listener.Addr().String()
	return address, listener.Close()
}
