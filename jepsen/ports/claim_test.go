//go:build unix

package ports

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"testing"
)

// holderEnv makes TestHoldAPortForTheParent the child process of
// TestAPortIsClaimedAcrossProcesses.
const holderEnv = "SLUICE_PORTS_TEST_HOLDER"

// TestHoldAPortForTheParent runs only as the child: it hands out a port,
// prints it, and holds it until its stdin closes.
func TestHoldAPortForTheParent(t *testing.T) {
	if os.Getenv(holderEnv) == "" {
		t.Skip("the child process of TestAPortIsClaimedAcrossProcesses")
	}
	address, err := Loopback()
	if err != nil {
		t.Fatal(err)
	}
	fmt.Println("holding", address)
	_, _ = bufio.NewReader(os.Stdin).ReadString('\n') // until the parent closes it
}

// TestAPortIsClaimedAcrossProcesses: a port another live process handed
// out cannot be claimed here, though nothing listens on it (as while its
// broker is down); once that process exits, it can.
func TestAPortIsClaimedAcrossProcesses(t *testing.T) {
	if _, _, ok := pickRange(); !ok {
		t.Skip("no room below this machine's ephemeral range")
	}
	child := exec.Command(os.Args[0], "-test.run=^TestHoldAPortForTheParent$", "-test.count=1")
	child.Env = append(os.Environ(), holderEnv+"=1")
	stdin, err := child.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := child.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	defer child.Process.Kill()
	var address string
	if _, err := fmt.Fscanf(bufio.NewReader(stdout), "holding %s\n", &address); err != nil {
		t.Fatalf("reading the child's port: %v", err)
	}
	_, portText, err := net.SplitHostPort(address)
	if err != nil {
		t.Fatal(err)
	}
	port, _ := strconv.Atoi(portText)

	if listener, err := net.Listen("tcp", address); err != nil {
		t.Fatalf("nothing should listen on the held port %d: %v", port, err)
	} else {
		listener.Close()
	}
	if file, free, err := claim(port); err != nil || free {
		if file != nil {
			file.Close()
		}
		t.Fatalf("claimed port %d while the child holds it (free=%v, err=%v)", port, free, err)
	}

	stdin.Close()
	if err := child.Wait(); err != nil {
		t.Fatalf("child: %v", err)
	}
	file, free, err := claim(port)
	if err != nil || !free {
		t.Fatalf("port %d still claimed after its holder exited (free=%v, err=%v)", port, free, err)
	}
	file.Close()
}
