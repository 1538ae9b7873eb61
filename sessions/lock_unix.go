//go:build unix

package sessions

import (
	"errors"
	"os"
	"syscall"
)

// lockStateFile says whether the persister also locks the state file
// itself, moving the lock to each new file it renames into place. Where a
// lock file can be deleted while open (unix), a second process could
// otherwise take a fresh FILE.lock while the first still writes.
const lockStateFile = true

// lockFile takes an exclusive lock on f without waiting; errLocked when
// another open file holds it.
func lockFile(f *os.File) error {
	err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
	if errors.Is(err, syscall.EWOULDBLOCK) {
		return errLocked
	}
	return err
}

func unlockFile(f *os.File) error {
	return syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
}

// syncDir makes a rename in dir durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
