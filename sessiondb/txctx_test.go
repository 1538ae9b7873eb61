package sessiondb

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hookwire/hookwire/sessions"
)

// A write's transaction runs under its caller's context. One whose context
// has ended (the sidecar is stopping) does not wait for its turn: its
// change is served from the cache, is not reported as a database failure,
// and is written by the next transaction that works; the writer queue's
// turn is neither kept nor lost.
func TestWriteUnderCallersContext(t *testing.T) {
	for _, tt := range []struct {
		name     string
		turnHeld bool // another writer of this process holds the turn
	}{
		{"waiting for the turn", true},
		{"with the turn free", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "state.db")
			h, d := dbHarness(t, path, sessions.Config{})
			q := d.c.writers
			if tt.turnHeld {
				require.NoError(t, q.lock(context.Background(), busyTimeout))
			}
			ended, cancel := context.WithCancel(context.Background())
			cancel()
			h.s.Tracked().SetAgent(ended, "ses_a", "explorer")
			h.s.Tasks().BeginCall(ended, "call_1", "p1", "explorer", "one", "")
			h.s.Tasks().CompleteCall(ended, "call_1", out("ses_child"))

			assert.Equal(t, "explorer", h.s.Tracked().Agent("ses_a"), "served from the cache")
			assert.Equal(t, []string{"ses_child=ses_child one"}, h.aliases("p1"), "listed by its task id until written (issue 49)")
			assert.Empty(t, d.State().LastWriteError, "a caller that gave up is not a failing database")
			assert.Equal(t, 0, countRows(t, path, "tracked"), "not written yet")
			assert.Equal(t, 0, countRows(t, path, "parents"))

			if tt.turnHeld {
				q.unlock()
			}
			h.s.Tracked().SetAgent(context.Background(), "ses_b", "oracle")
			assert.Equal(t, 2, countRows(t, path, "tracked"), "the next transaction wrote what was kept")
			assert.Equal(t, 1, countRows(t, path, "parents"))
			assert.Empty(t, d.State().LastWriteError)
			assert.Equal(t, []string{"exp-1=ses_child one"}, h.aliases("p1"), "written, by its alias")

			// The turn is free, once: taken now, a second taker finds it taken.
			require.NoError(t, q.lock(context.Background(), 0))
			assert.ErrorIs(t, q.lock(context.Background(), 0), errWritersBusy)
			q.unlock()
		})
	}
}
