package harness

import (
	"net"
	"os"
	"testing"
)

// TestConnectingProcessFindsTheDialer: the proxies tell nodes apart by
// the process holding the connecting socket; this process dials itself
// and must be found, and a process that holds no such socket must not.
func TestConnectingProcessFindsTheDialer(t *testing.T) {
	if !partitionsSupported {
		t.Skip("needs Linux's /proc")
	}
	listener, err := listenLoopback()
	if err != nil {
		t.Fatal(err)
	}
	defer listener.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		conn, err := listener.Accept()
		if err == nil {
			accepted <- conn
		}
		close(accepted)
	}()
	dialed := dial(t, listener.Addr().String())
	_ = dialed
	conn, ok := <-accepted
	if !ok {
		t.Fatal("accept failed")
	}
	defer conn.Close()
	self := os.Getpid()
	if pid, err := connectingProcess(conn, []int{1, self}); err != nil || pid != self {
		t.Fatalf("connectingProcess = %d, %v; want this process, %d", pid, err, self)
	}
	if pid, err := connectingProcess(conn, []int{1}); err == nil {
		t.Fatalf("connectingProcess named pid %d, which holds no such socket", pid)
	}
}
