package sessiondb

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hookwire/hookwire/sessions"
)

// What one process acknowledged while it could not write, met with what
// another process did meanwhile (issue 49 item 6: two slips no test
// caught). Each is driven through the store's exported methods on a real
// database, so it holds wherever the code that decides it lives.

// A parent this process had written, changed while its writes failed, and
// forgotten meanwhile by another process (session.deleted there): the
// forgetting stands. This process's copy is not written back whole (the
// forgotten aliases would return); only the entry it made and never
// showed by alias is remembered again.
func TestUnwrittenParentForgottenElsewhereStaysForgotten(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	a, da := dbHarness(t, path, sessions.Config{})
	b, _ := dbHarness(t, path, sessions.Config{})
	a.task("ses_p", "explorer", "written", "ses_old")
	require.Len(t, b.s.Tasks().List("ses_p"), 1)

	unwrittenTask(t, path, a, da, "disk full (test)", "ses_p", "oracle", "a's, not written", "ses_from_a")

	b.s.DeleteSession(context.Background(), "ses_p") // forgotten by the other process
	require.False(t, taskIDsIn(t, path)["ses_old"])
	a.s.Tracked().SetAgent(context.Background(), "ses_x", "explorer") // a's next transaction
	require.Empty(t, da.State().LastWriteError)

	ids := taskIDsIn(t, path)
	assert.False(t, ids["ses_old"], "the alias the other process forgot does not come back")
	assert.True(t, ids["ses_from_a"], "a's own entry, never shown by alias, is remembered again")
	var listed []string
	for _, e := range b.s.Tasks().List("ses_p") {
		listed = append(listed, e.TaskID)
	}
	assert.Equal(t, []string{"ses_from_a"}, listed, "as the other process lists it")
}

// Entries made while writes failed, under a parent another process
// changed meanwhile, are remembered again in that process's version in
// the order they were made: the older gets the lower alias number, the
// newer stays the most recently used (as they would have been written).
func TestUnwrittenEntriesRememberedAgainInTheirOrder(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	cfg := sessions.Config{MaxSessionsPerAgent: 5}
	a, da := dbHarness(t, path, cfg)
	b, _ := dbHarness(t, path, cfg)
	a.task("ses_p", "explorer", "first", "ses_1")

	execOn(t, path, "CREATE TRIGGER fail_writes BEFORE INSERT ON entries WHEN NEW.task_id LIKE 'ses_from_a%' BEGIN SELECT RAISE(ABORT, 'disk full (test)'); END")
	a.task("ses_p", "explorer", "a's older", "ses_from_a1")
	a.task("ses_p", "explorer", "a's newer", "ses_from_a2")
	require.NotEmpty(t, da.State().LastWriteError)
	execOn(t, path, "DROP TRIGGER fail_writes")
	b.task("ses_p", "explorer", "b's", "ses_from_b")
	a.s.Tracked().SetAgent(context.Background(), "ses_x", "explorer") // a's next transaction
	require.Empty(t, da.State().LastWriteError)

	for _, h := range []*harness{a, b} {
		assert.Equal(t, []string{
			"exp-4=ses_from_a2 a's newer",
			"exp-3=ses_from_a1 a's older",
			"exp-2=ses_from_b b's",
			"exp-1=ses_1 first",
		}, h.aliases("ses_p"), "newest first, numbered in the order they were made")
	}
}
