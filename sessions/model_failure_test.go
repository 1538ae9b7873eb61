package sessions

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hookwire/hookwire/core"
)

// recordSwitchingFailure records, in one intent, a failure of model for
// session: its health, agent, parent, switch and model decision.
func recordSwitchingFailure(s *Store, session, model string, at time.Time) error {
	return s.RecordModels(context.Background(), func(r *ModelRecords) {
		r.SetAgent(session, "explore")
		r.SetParent(session, "ses_p")
		r.SetHealth(model, core.ModelHealth{Until: at.Add(time.Minute), Strikes: 1, Last: at, Class: "rate-limit"})
		r.AddSwitch(session, Switch{From: model, To: "fake/fb", Reason: "rate-limit", At: at})
		r.SetModelDecision(session, ModelDecision{Model: "fake/fb", Rung: "user", Changed: true})
	})
}

// A model failure's records are kept together or not at all: when its
// transaction cannot commit (or cannot begin) nothing it changed is kept,
// in the database or in the store, and the error says so; the store's
// earlier state of the session stands.
func TestModelFailureAllOrNothing(t *testing.T) {
	at := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	t.Run("committed", func(t *testing.T) {
		db := newFakeDB()
		s, _, _ := attachFake(t, db)
		require.NoError(t, recordSwitchingFailure(s, "ses_c", "fake/m", at))
		assert.Len(t, db.tracked["ses_c"].Switches, 1)
		assert.Contains(t, db.health, "fake/m")
		assert.Equal(t, "fake/fb", db.tracked["ses_c"].Model.Model)
	})
	for _, how := range []string{"commit fails", "lock not had"} {
		t.Run(how, func(t *testing.T) {
			db := newFakeDB()
			s, c, reported := attachFake(t, db)
			s.Tracked().SetAgent(context.Background(), "ses_c", "explore") // tracked before
			if how == "commit fails" {
				db.failNext = errors.New("disk full (fake)")
			} else {
				c.beginErr = errors.New("database is locked (fake)")
			}
			err := recordSwitchingFailure(s, "ses_c", "fake/m", at)
			require.ErrorIs(t, err, ErrNotRecorded)
			assert.NotEmpty(t, *reported, "status is told")
			assert.Empty(t, db.tracked["ses_c"].Switches)
			assert.NotContains(t, db.health, "fake/m")

			c.beginErr = nil
			s.Tracked().SetAgent(context.Background(), "ses_other", "explore") // the next transaction writes nothing of it
			assert.Empty(t, db.tracked["ses_c"].Switches)
			assert.Nil(t, db.tracked["ses_c"].Model)
			assert.Empty(t, s.Tracked().Switches("ses_c"), "nor does the store keep it")
			_, decided := s.Tracked().ModelDecision("ses_c")
			assert.False(t, decided)
			assert.Empty(t, s.Tracked().Parent("ses_c"))
			assert.Equal(t, "explore", s.Tracked().Agent("ses_c"), "what was kept before stays")
		})
	}
	t.Run("in memory", func(t *testing.T) {
		s := New(Config{})
		require.NoError(t, recordSwitchingFailure(s, "ses_c", "fake/m", at))
		assert.Len(t, s.Tracked().Switches("ses_c"), 1)
		assert.True(t, s.ProviderHealth().Cooling("fake/m", at))
	})
}
