package sessiondb

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hookwire/hookwire/sessions"
)

// Within one request the store looks for other processes' commits once for
// its reads (sessions.Store.BeginRequest, the Backend's
// Transactions.BeginRequest), where it looked once a store method; its
// writes still decide on the latest state, so two processes never hand
// out one alias even when the other commits mid-request.
func TestRequestScopeReadsOnceWritesSeeOthers(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	a, da := dbHarness(t, path, sessions.Config{MaxSessionsPerAgent: 10})
	b, _ := dbHarness(t, path, sessions.Config{MaxSessionsPerAgent: 10})
	looks := func() int {
		da.mu.Lock()
		defer da.mu.Unlock()
		return da.b.looks
	}

	reads := func() {
		for _, s := range []string{"ses_1", "ses_2", "ses_3", "ses_4", "ses_5"} {
			a.s.Tracked().Agent(s)
		}
		a.s.Tasks().List("p1")
		a.s.Tasks().ResumableSessions("p1")
	}
	before := looks()
	reads()
	require.Greater(t, looks()-before, 1, "outside a request each read looks")

	before = looks()
	end := a.s.BeginRequest()
	reads()
	assert.Equal(t, 1, looks()-before, "one look for the request's reads")

	// b commits an alias mid-request; a's write in the same request
	// continues b's counter.
	a.task("p1", "explorer", "a's first", "ses_a1")
	b.task("p1", "explorer", "b's", "ses_b1")
	a.task("p1", "explorer", "a's second", "ses_a2")
	end()
	got := map[string]string{}
	for _, e := range b.s.Tasks().List("p1") {
		require.NotContains(t, got, e.Alias, "alias handed out twice")
		got[e.Alias] = e.TaskID
	}
	assert.Equal(t, map[string]string{"exp-1": "ses_a1", "exp-2": "ses_b1", "exp-3": "ses_a2"}, got)

	// After the request, a sees b's later commit on its cached parent.
	b.task("p1", "explorer", "b's second", "ses_b2")
	act, id := a.resolve("p1", "explorer", "exp-4")
	assert.Equal(t, sessions.TaskIDReplace, act)
	assert.Equal(t, "ses_b2", id)
}

// A sidecar prepares its first request's read statements when it opens
// the database, so that the first transform does not compile them.
func TestOpenPreparesReads(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	_, d := dbHarness(t, path, sessions.Config{})
	d.mu.Lock()
	c := d.c
	d.mu.Unlock()
	for _, q := range []string{"SELECT rev FROM parents WHERE id=?", "SELECT agent, model, rev FROM tracked WHERE session=?", "SELECT data FROM cache WHERE session=?", "PRAGMA data_version"} {
		assert.Contains(t, c.stmts, q, "not prepared at open")
	}
}
