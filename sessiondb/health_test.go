package sessiondb

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hookwire/hookwire/core"

	"github.com/hookwire/hookwire/sessions"
)

// Health and a session's parent, running model and switches live in the
// project's database: another process on it sees them at once, and a
// later one finds them.
func TestHealthSharedThroughTheDatabase(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	a, _ := dbHarness(t, path, sessions.Config{})
	b, _ := dbHarness(t, path, sessions.Config{})
	until := epoch.Add(5 * time.Minute)
	a.s.ProviderHealth().Set(context.Background(), "fake/fake-model-3", core.ModelHealth{Until: until, Strikes: 1, Last: epoch, Class: core.FailureRateLimit, Message: "Rate limit reached"})
	assert.True(t, b.s.ProviderHealth().Cooling("fake/fake-model-3", epoch), "b sees a's failure at once")
	got, ok := b.s.ProviderHealth().Of("fake/fake-model-3")
	require.True(t, ok)
	assert.True(t, got.Until.Equal(until))
	assert.Equal(t, "Rate limit reached", got.Message)
	require.Len(t, b.s.ProviderHealth().List(), 1)

	a.s.Tracked().SetAgent(context.Background(), "ses_c", "explorer")
	a.s.Tracked().SetParent(context.Background(), "ses_c", "ses_p")
	a.s.Tracked().SetRunning(context.Background(), "ses_c", "fake/fake-model-2")
	a.s.Tracked().SetModelDecision(context.Background(), "ses_c", sessions.ModelDecision{Model: "fake/fake-model-2", Rung: "user-fallback", Changed: true})
	a.s.Tracked().AddSwitch(context.Background(), "ses_c", sessions.Switch{From: "fake/fake-model-3", To: "fake/fake-model-2", Reason: "rate-limit", At: epoch})
	assert.Equal(t, "ses_p", b.s.Tracked().Parent("ses_c"))
	assert.Equal(t, "fake/fake-model-2", b.s.Tracked().Running("ses_c"))
	require.Len(t, b.s.Tracked().Switches("ses_c"), 1)
	d, ok := b.s.Tracked().ModelDecision("ses_c")
	require.True(t, ok)
	assert.Equal(t, "user-fallback", d.Rung)

	// A later reader of the file (hookwire sessions) lists the health too.
	contents, err := ReadState(path)
	require.NoError(t, err)
	require.Len(t, contents.Health, 1)
	assert.Equal(t, "fake/fake-model-3", contents.Health[0].Model)
}
