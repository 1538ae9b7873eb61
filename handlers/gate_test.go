package handlers

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hookwire/hookwire/rpc"
)

// The gate lets initialize and exit through before initialize succeeded,
// refuses everything else with -32002, and counts by method (a made-up
// name as "(other)").
func TestGate(t *testing.T) {
	var g gate
	for _, m := range []string{"initialize", "exit"} {
		assert.NoError(t, g.admit(m), m)
	}
	for _, m := range []string{"status", "chat.message", "made.up"} {
		err := g.admit(m)
		var re *rpc.Error
		require.True(t, errors.As(err, &re), m)
		assert.Equal(t, rpc.CodeNotInitialized, re.Code, m)
	}
	g.opened()
	assert.True(t, g.ready())
	assert.NoError(t, g.admit("status"))
	g.count("status", false)
	g.count("status", true)
	g.count("made.up", true)
	requests, errs := g.counts()
	assert.Equal(t, map[string]uint64{"status": 2, "(other)": 1}, requests)
	assert.Equal(t, uint64(2), errs)
	requests["status"] = 99
	again, _ := g.counts()
	assert.Equal(t, uint64(2), again["status"], "counts is a copy")
}
