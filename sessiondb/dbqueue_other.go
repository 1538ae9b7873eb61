//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package sessiondb

import (
	"errors"
	"os"
)

// No flock here: writers wait in SQLite's busy handler alone.
const haveFlock = false

func flockFile(*os.File) error   { return errors.ErrUnsupported }
func funlockFile(*os.File) error { return errors.ErrUnsupported }
