package ports

import (
	"net"
	"strconv"
	"testing"
)

func TestLoopbackPicksFreshFreePortsBelowTheEphemeralRange(t *testing.T) {
	low, high, ok := pickRange()
	if !ok {
		t.Skip("no room below this machine's ephemeral range")
	}
	seen := map[string]bool{}
	for range 50 {
		address, err := Loopback()
		if err != nil {
			t.Fatal(err)
		}
		if seen[address] {
			t.Fatalf("%s handed out twice", address)
		}
		seen[address] = true
		_, portText, err := net.SplitHostPort(address)
		if err != nil {
			t.Fatal(err)
		}
		port, _ := strconv.Atoi(portText)
		if port < low || port > high {
			t.Fatalf("port %d outside [%d, %d]", port, low, high)
		}
		listener, err := net.Listen("tcp", address)
		if err != nil {
			t.Fatalf("the port picked is not free: %v", err)
		}
		listener.Close()
	}
}

func TestParseEphemeralLow(t *testing.T) {
	if low, err := parseEphemeralLow("32768\t60999\n"); err != nil || low != 32768 {
		t.Fatalf("got %d, %v", low, err)
	}
	if _, err := parseEphemeralLow("garbage"); err == nil {
		t.Fatal("garbage parsed")
	}
}
