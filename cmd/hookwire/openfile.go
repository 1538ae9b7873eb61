package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
)

// openLogFile opens path for appending (created 0600 when missing) without
// following a symbolic link at it: a link planted where a log is written
// (a checkout's file named like the log) would otherwise have the log
// appended to whatever it points at. A FIFO or device is refused too,
// without blocking on it (issue 23).
func openLogFile(path string) (*os.File, error) {
	if fi, err := os.Lstat(path); err == nil {
		switch {
		case fi.Mode()&fs.ModeSymlink != 0:
			return nil, fmt.Errorf("%s is a symbolic link; refusing to write through it", path)
		case !fi.Mode().IsRegular():
			return nil, fmt.Errorf("%s is not a regular file (%v); refusing to write to it", path, fi.Mode().Type())
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND|noFollow|nonBlock, 0o600)
	if err != nil {
		return nil, err
	}
	// Between Lstat and open the name may have changed: check what opened.
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		f.Close()
		return nil, fmt.Errorf("%s is not a regular file; refusing to write to it", path)
	}
	return f, nil
}
