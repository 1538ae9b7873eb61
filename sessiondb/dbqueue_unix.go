//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package sessiondb

import (
	"errors"
	"os"
	"syscall"
)

const haveFlock = true

// flockFile takes f's exclusive flock, waiting in the kernel (EINTR, from
// a signal, is retried).
func flockFile(f *os.File) error {
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX)
		if !errors.Is(err, syscall.EINTR) {
			return err
		}
	}
}

func funlockFile(f *os.File) error { return syscall.Flock(int(f.Fd()), syscall.LOCK_UN) }
