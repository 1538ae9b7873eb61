package main

import (
	"errors"
	"fmt"
	"io"
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

// maxReadSize bounds what doctor reads of one file (a config file, a
// package.json): OpenCode's are a few kilobytes; a file far larger is not
// one doctor should hold in memory to judge.
const maxReadSize = 4 << 20

// readRegularFile reads the regular file at path, at most limit bytes. A
// symbolic link is followed (people keep their OpenCode config in a
// dotfiles checkout) but what it leads to must be a regular file too: a
// FIFO, a device, a socket or a directory is refused with what it is, and
// a FIFO is never opened, so nothing blocks (os.ReadFile waited forever on
// a FIFO's writer, issue 49). The error says what is at path, not path.
func readRegularFile(path string, limit int64) ([]byte, error) {
	f, err := openRegularFile(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		size := int64(len(data))
		if fi, err := f.Stat(); err == nil {
			size = fi.Size()
		}
		return nil, fmt.Errorf("is %s, more than the %s doctor reads of a file", sizeText(size), sizeText(limit))
	}
	return data, nil
}

// openRegularFile opens path for reading when it is (or links to) a
// regular file, as readRegularFile says. The open does not block: between
// the look and the open the name may have become a FIFO, and what opened
// is checked again.
func openRegularFile(path string) (*os.File, error) {
	fi, err := os.Stat(path)
	if err != nil {
		if l, lerr := os.Lstat(path); lerr == nil && l.Mode()&fs.ModeSymlink != 0 && !errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("is a symbolic link that cannot be followed (a loop, or %v)", unwrapPathError(err))
		}
		return nil, unwrapPathError(err)
	}
	if why := notRegular(fi.Mode()); why != "" {
		return nil, errors.New(why)
	}
	f, err := os.OpenFile(path, os.O_RDONLY|nonBlock, 0)
	if err != nil {
		return nil, unwrapPathError(err)
	}
	if fi, err := f.Stat(); err != nil || notRegular(fi.Mode()) != "" {
		f.Close()
		return nil, errors.New("is not a regular file (it changed while doctor looked)")
	}
	return f, nil
}

// notRegular says what a file of mode m is when it is not a regular file.
func notRegular(m fs.FileMode) string {
	var what string
	switch {
	case m.IsRegular():
		return ""
	case m.IsDir():
		what = "a directory"
	case m&fs.ModeNamedPipe != 0:
		what = "a named pipe (FIFO)"
	case m&fs.ModeDevice != 0:
		what = "a device"
	case m&fs.ModeSocket != 0:
		what = "a socket"
	default:
		what = "a " + m.Type().String() + " file"
	}
	return "is " + what + ", not a regular file; doctor does not read it"
}

// unwrapPathError drops the operation and path from an *fs.PathError: the
// caller names the file itself.
func unwrapPathError(err error) error {
	if pe, ok := errors.AsType[*fs.PathError](err); ok {
		return pe.Err
	}
	return err
}

// sizeText is n bytes in the unit a person reads at a glance.
func sizeText(n int64) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return plural(int(n), "byte")
}
