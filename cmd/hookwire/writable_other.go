//go:build !unix

package main

// stateUnwritable has no cheap kernel answer here: the sidecar's own
// read-only open reports it (status, a toast).
func stateUnwritable(string) string { return "" }
