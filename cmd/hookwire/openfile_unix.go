//go:build unix

package main

import "syscall"

// noFollow makes open fail on a symbolic link; nonBlock keeps open from
// waiting for a FIFO's reader.
const (
	noFollow = syscall.O_NOFOLLOW
	nonBlock = syscall.O_NONBLOCK
)
