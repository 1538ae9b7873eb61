package sessiondb

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hookwire/hookwire/sessions"
)

// Import writes records a store then reads as its own, and goes on from
// them: the next alias under an imported parent continues its counter,
// and a store's next revision is past the imported ones. A fill that fails
// leaves nothing written.
func TestImport(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	require.NoError(t, Import(context.Background(), path, func(w *Writer) error {
		if err := w.Parent(sessions.ParentRecord{ID: "ses_p", Rev: 40, Bytes: 300,
			Entries:  []sessions.EntryRecord{{Agent: "explorer", Alias: "exp-1", TaskID: "ses_t", Label: "seeded", LastUse: at, Tick: 40, Run: sessions.Run{State: sessions.RunCompleted}}},
			Counters: map[string]int64{"exp": 1}}); err != nil {
			return err
		}
		return w.Tracked(sessions.TrackedRecord{Session: "ses_t", Agent: "explorer", Rev: 41, Bytes: 200, Parent: "ses_p",
			Model: &sessions.ModelDecision{Model: "fake/m", Rung: "agent"}})
	}))
	h, _ := dbHarness(t, path, sessions.Config{MaxSessionsPerAgent: 10})
	assert.Equal(t, []string{"exp-1=ses_t seeded"}, h.aliases("ses_p"))
	assert.Equal(t, "explorer", h.s.Tracked().Agent("ses_t"))
	h.task("ses_p", "explorer", "new", "ses_t2")
	assert.Equal(t, []string{"exp-2=ses_t2 new", "exp-1=ses_t seeded"}, h.aliases("ses_p"))

	boom := errors.New("boom")
	err := Import(context.Background(), path, func(w *Writer) error {
		require.NoError(t, w.Parent(sessions.ParentRecord{ID: "ses_half", Rev: 99}))
		return boom
	})
	require.ErrorIs(t, err, boom)
	var n int
	require.NoError(t, rawDB(t, path).QueryRow("SELECT count(*) FROM parents WHERE id='ses_half'").Scan(&n))
	assert.Zero(t, n, "nothing of the failed import")
}
