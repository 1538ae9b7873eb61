//go:build race

package racetest

// Enabled: the binary is built with -race.
const Enabled = true
