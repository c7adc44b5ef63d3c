//go:build unix

package ports

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
)

// claimDir is where every process of this user records the ports it
// handed out: one lock file per port, flocked by the process that holds
// it. The kernel drops a flock when its holder exits, however it exits,
// so a claim never outlives its process and needs no cleaning up.
func claimDir() string {
	return filepath.Join(os.TempDir(), "sluice-ports-"+strconv.Itoa(os.Getuid()))
}

// claim takes port for this process until it exits, unless another
// process holds it; false, nil when one does. The caller keeps the lock
// file open (picked.claims), since closing it would drop the lock.
func claim(port int) (*os.File, bool, error) {
	dir := claimDir()
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, false, fmt.Errorf("ports: %w", err)
	}
	file, err := os.OpenFile(filepath.Join(dir, strconv.Itoa(port)+".lock"), os.O_RDONLY|os.O_CREATE, 0o600)
	if err != nil {
		return nil, false, fmt.Errorf("ports: %w", err)
	}
	if err := syscall.Flock(int(file.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		file.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, false, nil
		}
		return nil, false, fmt.Errorf("ports: locking port %d: %w", port, err)
	}
	return file, true, nil
}
