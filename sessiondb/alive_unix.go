//go:build unix

package sessiondb

import (
	"errors"
	"os"
	"syscall"
)

// processAlive reports whether a process of that pid runs on this machine
// (signal 0: nothing is sent); a process of another user is alive too.
func processAlive(pid int) bool {
	if pid <= 0 {
		return false
	}
	if pid == os.Getpid() {
		return true
	}
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
