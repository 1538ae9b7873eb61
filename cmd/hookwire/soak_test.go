//go:build soak

package main

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestSoak drives one sidecar with 1,000,000+ mixed calls across 10,000
// parent sessions (make soak, or go test -tags soak -run TestSoak
// ./cmd/hookwire/). Only a third of the parents are ever deleted, so the
// store's bounds alone must keep memory flat. It fails if the end RSS
// exceeds 1.5x the middle's (plus 16 MiB), goroutines grew, or the store
// exceeds its bounds; the figures are printed either way.
//
// It runs a binary built without -race (buildPlain).
func TestSoak(t *testing.T) {
	bin := buildPlain(t)
	began := time.Now()
	points, calls := runSoak(t, soakConfig{bin: bin, parents: 10000, rounds: 15, group: 50})
	require.GreaterOrEqual(t, calls, 1_000_000, "calls sent")
	checkSoak(t, points, calls, time.Since(began))
}

// TestSoakHostile is the soak with hostile sizes and cacheStable on (make
// soak): 1000 parents with 200-byte session ids, each with 8 agents of
// 200-byte names, 200-byte call and task ids and 1.7 KB descriptions, 256
// orchestrator messages (each freezing a sessions block), and a session
// whose agent name is 50 KB. Without byte bounds this shape reached GBs
// and a 248 MB state file. It fails if the state file exceeds the byte
// budget or the peak RSS the documented ceiling; the figures are printed
// either way.
func TestSoakHostile(t *testing.T) {
	bin := buildPlain(t)
	r := runHostileSoak(t, hostileSoak{bin: bin, parents: 1000, agents: 8, messages: 256})
	checkHostileSoak(t, r)
}
