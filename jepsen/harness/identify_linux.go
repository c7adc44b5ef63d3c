package harness

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
)

// connectingProcess finds which of candidates opened conn, a connection a
// proxy accepted on loopback. Every node dials from 127.0.0.1 and the same
// advertised address serves clients and peers, so the address cannot say
// who is calling; the kernel can: /proc/net/tcp names the socket inode of
// the connecting end (the line whose local address is conn's remote one),
// and /proc/PID/fd shows which process holds that inode.
func connectingProcess(conn net.Conn, candidates []int) (int, error) {
	local, localOK := conn.LocalAddr().(*net.TCPAddr)
	remote, remoteOK := conn.RemoteAddr().(*net.TCPAddr)
	if !localOK || !remoteOK || local.IP.To4() == nil || remote.IP.To4() == nil {
		return 0, fmt.Errorf("harness: %v → %v is not an IPv4 TCP connection", conn.RemoteAddr(), conn.LocalAddr())
	}
	inode, err := socketInode(procAddress(remote), procAddress(local))
	if err != nil {
		return 0, err
	}
	link := "socket:[" + inode + "]"
	for _, pid := range candidates {
		if holdsSocket(pid, link) {
			return pid, nil
		}
	}
	return 0, errNoCandidate
}

var errNoCandidate = errors.New("harness: no candidate process holds the connecting socket")

// procAddress writes an IPv4 address as /proc/net/tcp does: the address
// as a native-endian 32-bit hex number, a colon, the port in hex.
func procAddress(address *net.TCPAddr) string {
	return fmt.Sprintf("%08X:%04X", binary.NativeEndian.Uint32(address.IP.To4()), address.Port)
}

// socketInode finds the inode of the socket whose local address is local
// and remote address remote.
func socketInode(local, remote string) (string, error) {
	f, err := os.Open("/proc/net/tcp")
	if err != nil {
		return "", fmt.Errorf("harness: %w", err)
	}
	defer f.Close()
	scanner := bufio.NewScanner(f)
	for scanner.Scan() {
		fields := strings.Fields(scanner.Text())
		// sl local rem st queues tr retrnsmt uid timeout inode ...
		if len(fields) >= 10 && fields[1] == local && fields[2] == remote {
			return fields[9], nil
		}
	}
	if err := scanner.Err(); err != nil {
		return "", fmt.Errorf("harness: reading /proc/net/tcp: %w", err)
	}
	return "", fmt.Errorf("harness: no socket %s → %s in /proc/net/tcp", local, remote)
}

// holdsSocket reports whether process pid has a descriptor on the socket
// named link ("socket:[inode]").
func holdsSocket(pid int, link string) bool {
	dir := "/proc/" + strconv.Itoa(pid) + "/fd"
	entries, err := os.ReadDir(dir)
	if err != nil {
		return false
	}
	for _, entry := range entries {
		target, err := os.Readlink(dir + "/" + entry.Name())
		if err == nil && target == link {
			return true
		}
	}
	return false
}

// partitionsSupported: the proxies can tell nodes apart here.
const partitionsSupported = true
