package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The MODEL column of `hookwire sessions` shows each task session's model decision (PROTOCOL.md
// 4.7): model, variant, the rung that decided and whether it changed the
// model; "-" for a session without one.
func TestSessionsModelColumn(t *testing.T) {
	state := `{"version":1,"clock":3,"parents":[{"id":"ses_p","counters":{"exp":1,"ora":1,"fix":1},"entries":[
  {"agent":"explorer","alias":"exp-1","taskId":"ses_e","label":"look","lastUse":"2026-11-30T10:00:03Z","use":3},
  {"agent":"oracle","alias":"ora-1","taskId":"ses_o","label":"think","lastUse":"2026-11-30T10:00:02Z","use":2},
  {"agent":"fixer","alias":"fix-1","taskId":"ses_f","label":"fix","lastUse":"2026-11-30T10:00:01Z","use":1}]}],
 "sessionAgents":[
  {"session":"ses_e","agent":"explorer","model":{"model":"fake/fake-model-2","variant":"high","rung":"fallback-chain","changed":true}},
  {"session":"ses_o","agent":"oracle","model":{"model":"fake/fake-model","rung":"category-default"}}]}`
	path := filepath.Join(t.TempDir(), "state.json")
	require.NoError(t, os.WriteFile(path, []byte(state), 0o600))
	var stdout, stderr bytes.Buffer
	require.Equal(t, 0, sessionsCmd([]string{"--state", path}, &stdout, &stderr), stderr.String())
	out := stdout.String()
	assert.Contains(t, out, "LAST USE              MODEL\n")
	assert.Contains(t, out, "2026-11-30T10:00:03Z  fake/fake-model-2 high (fallback-chain, changed)\n")
	assert.Contains(t, out, "2026-11-30T10:00:02Z  fake/fake-model (category-default)\n")
	assert.Contains(t, out, "2026-11-30T10:00:01Z  -\n")
}
