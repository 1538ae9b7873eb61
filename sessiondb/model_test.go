package sessiondb

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hookwire/hookwire/sessions"
)

// Decisions survive the state file, and ReadState (the CLI's view)
// shows them; a file from before decisions reads as none, and one whose
// decision breaks the caps keeps the session without it.
func TestModelDecisionPersists(t *testing.T) {
	h := newHarness(t, sessions.Config{})
	h.s.Tracked().SetAgent(context.Background(), "ses_a", "explorer")
	h.s.Tracked().SetModelDecision(context.Background(), "ses_a", sessions.ModelDecision{Model: "fake/fake-model-2", Variant: "high", Rung: "fallback-chain", Changed: true})
	h.task("ses_p", "explorer", "look", "ses_a")
	data, err := h.s.Snapshot()
	require.NoError(t, err)
	assert.Contains(t, string(data), `{"session":"ses_a","agent":"explorer","model":{"model":"fake/fake-model-2","variant":"high","rung":"fallback-chain","changed":true}}`)

	dst := newTestStore(sessions.Config{})
	require.NoError(t, dst.Restore(data))
	got, ok := dst.Tracked().ModelDecision("ses_a")
	require.True(t, ok)
	assert.Equal(t, "fallback-chain", got.Rung)

	path := filepath.Join(t.TempDir(), "state.json")
	require.NoError(t, os.WriteFile(path, data, 0o600))
	contents, err := ReadState(path)
	require.NoError(t, err)
	require.Len(t, contents.Sessions, 1)
	require.NotNil(t, contents.Sessions[0].Model)
	assert.Equal(t, "fake/fake-model-2", contents.Sessions[0].Model.Model)

	for name, doc := range map[string]string{
		"older file":     `{"version":1,"clock":1,"parents":[],"sessionAgents":[{"session":"ses_a","agent":"explorer"}]}`,
		"model too long": `{"version":1,"clock":1,"parents":[],"sessionAgents":[{"session":"ses_a","agent":"explorer","model":{"model":"` + strings.Repeat("x", sessions.MaxModelBytes+1) + `"}}]}`,
		"blank model":    `{"version":1,"clock":1,"parents":[],"sessionAgents":[{"session":"ses_a","agent":"explorer","model":{"model":""}}]}`,
	} {
		t.Run(name, func(t *testing.T) {
			s := newTestStore(sessions.Config{})
			require.NoError(t, s.Restore([]byte(doc)))
			assert.Equal(t, "explorer", s.Tracked().Agent("ses_a"))
			_, ok := s.Tracked().ModelDecision("ses_a")
			assert.False(t, ok)
		})
	}
}
