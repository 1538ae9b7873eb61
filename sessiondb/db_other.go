//go:build !unix

package sessiondb

// oNoFollow: no such flag here; CheckStatePath's look at the names is the
// guard.
const oNoFollow = 0

func isReadOnlyFS(error) bool { return false }
