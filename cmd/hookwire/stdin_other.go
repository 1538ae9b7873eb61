//go:build !unix

package main

import "os"

// protocolIn returns stdin for rpc.Serve (see stdin_unix.go).
func protocolIn() (in *os.File, restore func()) { return os.Stdin, func() {} }
