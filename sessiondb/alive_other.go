//go:build !unix

package sessiondb

import "os"

// processAlive reports whether a process of that pid runs on this
// machine, as far as os.FindProcess can tell (on Windows it opens the
// process).
func processAlive(pid int) bool {
	if pid <= 0 {
		return false
	}
	if pid == os.Getpid() {
		return true
	}
	p, err := os.FindProcess(pid)
	if err != nil {
		return false
	}
	p.Release()
	return true
}
