package sessions

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestBeginCallWithoutCallID: a task call with no callID still has its
// task_id resolved (and the resumed entry marked used), but no pending
// call is remembered for it (PROTOCOL.md 4.2).
func TestBeginCallWithoutCallID(t *testing.T) {
	h := newHarness(t, Config{})
	h.task("p1", "explorer", "one", "ses_a")
	h.task("p1", "explorer", "two", "ses_b")
	pending := h.s.Stats().PendingCalls

	rows := []struct {
		name, requested string
		action          TaskIDAction
		id              string
	}{
		{"alias resolved", "exp-1", TaskIDReplace, "ses_a"},
		{"real id trimmed", " ses_b ", TaskIDReplace, "ses_b"},
		{"unknown session id left, trimmed", " ses_zzz ", TaskIDReplace, "ses_zzz"},
		{"unknown alias removed", "exp-9", TaskIDRemove, ""},
		{"none requested", "", TaskIDLeave, ""},
	}
	for _, row := range rows {
		t.Run(row.name, func(t *testing.T) {
			action, id := h.s.Tasks().BeginCall(context.Background(), "", "p1", "explorer", "again", row.requested)
			assert.Equal(t, row.action, action)
			assert.Equal(t, row.id, id)
			assert.Equal(t, pending, h.s.Stats().PendingCalls, "no pending call without a callID")
		})
	}
	// Resolving marks the entry used: exp-1, resumed last, comes first.
	assert.Equal(t, []string{"exp-2=ses_b two", "exp-1=ses_a one"}, h.aliases("p1"))
	h.s.Tasks().BeginCall(context.Background(), "", "p1", "explorer", "again", "exp-1")
	assert.Equal(t, []string{"exp-1=ses_a one", "exp-2=ses_b two"}, h.aliases("p1"))
}
