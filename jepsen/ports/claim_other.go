//go:build !unix

package ports

import "os"

// claim cannot coordinate with other processes without flock; a port is
// this process's alone, and the race with another test process is left
// to the random pick.
func claim(port int) (*os.File, bool, error) { return nil, true, nil }
