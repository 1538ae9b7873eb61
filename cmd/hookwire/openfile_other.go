//go:build !unix

package main

// Windows has no O_NOFOLLOW: openLogFile's Lstat and Stat checks stand alone.
const (
	noFollow = 0
	nonBlock = 0
)
