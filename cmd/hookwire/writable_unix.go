//go:build unix

package main

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// stateUnwritable says why the state file at path (or the directory the
// sidecar would make it in) cannot be written, "" when it can: a
// read-only mount, another user's files. It asks the kernel (access(2)
// with W_OK), which answers a read-only file system even for root.
func stateUnwritable(path string) string {
	const wOK = 2
	if _, err := os.Stat(path); err == nil {
		if err := syscall.Access(path, wOK); err != nil {
			return path + " cannot be written (" + describeErrno(err) + ")"
		}
	}
	dir := filepath.Dir(path)
	for {
		if _, err := os.Stat(dir); err == nil || !errors.Is(err, fs.ErrNotExist) {
			break
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return ""
		}
		dir = parent
	}
	if err := syscall.Access(dir, wOK|1); err != nil {
		return "its directory " + dir + " cannot be written (" + describeErrno(err) + ")"
	}
	return ""
}

func describeErrno(err error) string {
	switch {
	case errors.Is(err, syscall.EROFS):
		return "a read-only file system"
	case errors.Is(err, syscall.EACCES), errors.Is(err, syscall.EPERM):
		return "permission denied"
	}
	return err.Error()
}
