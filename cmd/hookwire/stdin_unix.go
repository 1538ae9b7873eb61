//go:build unix

package main

import (
	"os"
	"syscall"
)

// protocolIn returns stdin for rpc.Serve. When it is a pipe or a socket
// (what a client that spawns the sidecar hands it: Node's child stdio is
// a socketpair), it is read in non-blocking mode, through Go's poller: a
// read that must wait parks the goroutine instead of a thread in the
// kernel, which the runtime would then replace and wake. Measured: a
// quarter less CPU per 500 B call and per 1 MB transform
// (scripts/bench/RESULTS.md). restore puts the descriptor back in
// blocking mode, as a process that shares it expects.
func protocolIn() (in *os.File, restore func()) {
	fi, err := os.Stdin.Stat()
	if err != nil || fi.Mode()&(os.ModeNamedPipe|os.ModeSocket) == 0 {
		return os.Stdin, func() {}
	}
	if err := syscall.SetNonblock(0, true); err != nil {
		return os.Stdin, func() {}
	}
	// os.NewFile sees the non-blocking mode and registers the descriptor
	// with the poller; os.Stdin (not used for reading from here on) keeps
	// its own *os.File, and stdinFile keeps this one from being finalized.
	stdinFile = os.NewFile(0, "/dev/stdin")
	return stdinFile, func() { _ = syscall.SetNonblock(0, false) }
}

var stdinFile *os.File
