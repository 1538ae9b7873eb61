//go:build !unix && !windows

package sessions

import (
	"errors"
	"os"
)

const lockStateFile = false

// Without a file lock the state file could be corrupted by a second
// process, so the persister runs in memory only (PROTOCOL.md 6).
func lockFile(*os.File) error { return errors.New("file locking is not supported on this platform") }

func unlockFile(*os.File) error { return nil }

func syncDir(string) error { return nil }
