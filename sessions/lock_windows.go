//go:build windows

package sessions

import (
	"errors"
	"os"

	"golang.org/x/sys/windows"
)

// lockStateFile is false on Windows: a file that is open cannot be
// replaced by a rename there, and an open FILE.lock cannot be deleted, so
// the lock file alone keeps a second writer out.
const lockStateFile = false

// lockOffset is where the locked byte lies: far beyond the holder's pid at
// the start of the file, which other processes read (a locked range cannot
// be read on Windows).
const lockOffset = 1 << 62

// lockFile takes an exclusive lock on f without waiting; errLocked when
// another open file holds it.
func lockFile(f *os.File) error {
	ol := &windows.Overlapped{Offset: uint32(lockOffset & 0xffffffff), OffsetHigh: uint32(lockOffset >> 32)}
	err := windows.LockFileEx(windows.Handle(f.Fd()),
		windows.LOCKFILE_EXCLUSIVE_LOCK|windows.LOCKFILE_FAIL_IMMEDIATELY, 0, 1, 0, ol)
	if errors.Is(err, windows.ERROR_LOCK_VIOLATION) || errors.Is(err, windows.ERROR_IO_PENDING) {
		return errLocked
	}
	return err
}

func unlockFile(f *os.File) error {
	ol := &windows.Overlapped{Offset: uint32(lockOffset & 0xffffffff), OffsetHigh: uint32(lockOffset >> 32)}
	return windows.UnlockFileEx(windows.Handle(f.Fd()), 0, 1, 0, ol)
}

// syncDir does nothing: a directory cannot be flushed on Windows, and NTFS
// journals the rename.
func syncDir(string) error { return nil }
