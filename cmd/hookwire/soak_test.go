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
