// Package racetest moves volume tests out of the -race pass.
//
// Under -race, modernc's SQLite (C transpiled to Go, every memory access
// instrumented) runs 10 to 25 times slower. A test that writes megabytes
// through it, or seeds tens of thousands of rows, spends minutes of CI's
// two cores there while checking sizes and counts, not goroutines. Such a
// test calls Volume first: under -race it is skipped, and `make test-go`
// runs it in a second, plain pass (go test -run '^TestVolume'). The
// tests that do race (the store's writers, the watcher, the process
// tests) stay in the -race pass.
package racetest

import (
	"strings"
	"testing"
)

// Prefix starts the name of every test that calls Volume: the plain pass
// selects the tests by it.
const Prefix = "TestVolume"

// Volume skips t when the binary is built with -race. A test whose name
// does not start with Prefix fails instead of skipping, since the plain
// pass would never run it.
func Volume(t testing.TB) {
	t.Helper()
	if !strings.HasPrefix(t.Name(), Prefix) {
		t.Fatalf("%s calls racetest.Volume but its name does not start with %s: make test-go's plain pass (-run '^%s') would never run it", t.Name(), Prefix, Prefix)
		return
	}
	if Enabled {
		t.Skipf("a volume test: make test-go runs it without -race (go test -run '^%s'), where SQLite is not slowed by the race detector", Prefix)
	}
}
