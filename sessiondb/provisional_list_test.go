package sessiondb

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hookwire/hookwire/sessions"
)

// Issue 49 item 3: A's write of its child's entry failed (another
// connection held the lock) while B handed out the alias A had made for
// it to B's child. sessions.list (and sessions.page from memory) show an
// entry not yet written by its task id, so no process's list maps an
// alias to a child another process's list maps it away from.
func TestProvisionalEntryListedByTaskID(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	a, da := dbHarness(t, path, sessions.Config{MaxSessionsPerAgent: 5})
	b, _ := dbHarness(t, path, sessions.Config{MaxSessionsPerAgent: 5})
	a.task("ses_p", "explorer", "first", "ses_1")

	unwrittenTask(t, path, a, da, "database is locked (test)", "ses_p", "explorer", "a's", "ses_from_a")
	b.task("ses_p", "explorer", "b's", "ses_from_b")

	listed := func(h *harness) map[string]string {
		out := map[string]string{}
		for _, e := range h.s.Tasks().List("ses_p") {
			out[e.Alias] = e.TaskID
		}
		return out
	}
	agree := func(why string) {
		t.Helper()
		la, lb := listed(a), listed(b)
		for alias, child := range la {
			if other, ok := lb[alias]; ok {
				assert.Equal(t, other, child, "%s: %s is %s in A's list and %s in B's", why, alias, child, other)
			}
		}
	}
	assert.Equal(t, "ses_from_a", listed(a)["ses_from_a"], "A lists its unwritten entry by its task id")
	assert.Equal(t, "ses_from_b", listed(b)["exp-2"])
	agree("A's write failed")
	page, err := a.s.Tasks().Page(context.Background(), "ses_p", "", 0)
	require.NoError(t, err)
	for _, e := range page.Entries {
		if e.TaskID == "ses_from_a" {
			assert.NotEqual(t, "exp-2", e.Alias, "nor does a page")
		}
	}

	a.s.Tracked().SetAgent(context.Background(), "ses_x", "explorer") // A's next transaction writes it
	require.Empty(t, da.State().LastWriteError)
	assert.Equal(t, "ses_from_a", listed(a)["exp-3"], "written, it is listed under the alias free in the database")
	agree("A's entry written")
}
