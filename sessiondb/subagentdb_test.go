package sessiondb

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hookwire/hookwire/sessions"
	"github.com/hookwire/hookwire/subagents"
)

// subagentDB opens a state database as a sidecar does and its subagents'
// records beside it.
func subagentDB(t *testing.T) (string, *Subagents) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "state.db")
	d, err := OpenDatabase(context.Background(), path, newTestStore(sessions.Config{}), zerolog.Nop())
	require.NoError(t, err)
	t.Cleanup(func() { d.Close() })
	s := d.Subagents()
	require.False(t, s.memory, "opened in the database")
	return path, s
}

var t0 = time.Date(2026, 12, 6, 1, 0, 0, 0, time.UTC)

func at(sec int) time.Time { return t0.Add(time.Duration(sec) * time.Second) }

func msg(session, id string, in, out int64, cost float64, done bool) subagents.Message {
	return subagents.Message{Session: session, ID: id, Model: "fake/fake-model", Tokens: subagents.Tokens{Input: in, Output: out, CacheRead: 2 * in}, Cost: cost, Done: done, At: t0}
}

func page(t *testing.T, s *Subagents, parent string) subagents.Page {
	t.Helper()
	p, err := s.SubagentsOf(context.Background(), parent, "", 0)
	require.NoError(t, err)
	return p
}

func states(p subagents.Page) map[string]subagents.State {
	out := map[string]subagents.State{}
	for _, r := range p.Subagents {
		out[r.SessionID] = r.State
	}
	return out
}

func TestSubagentIntents(t *testing.T) {
	ctx := context.Background()
	_, s := subagentDB(t)

	ch, err := s.SubagentStarted(ctx, subagents.Started{Session: "ses_C1", Parent: "ses_P", Label: "Find the tests", Agent: "explore", At: at(0)})
	require.NoError(t, err)
	assert.Equal(t, []string{"ses_P"}, ch.Parents)
	ch, err = s.SubagentStarted(ctx, subagents.Started{Session: "ses_C1", Parent: "ses_P", At: at(1)})
	require.NoError(t, err)
	assert.Empty(t, ch.Parents, "a second creation is not news")
	_, err = s.SubagentStarted(ctx, subagents.Started{Session: "ses_G", Parent: "ses_C1", Agent: "general", At: at(2)})
	require.NoError(t, err)

	p := page(t, s, "ses_P")
	require.Len(t, p.Subagents, 2, "a child of a child is listed under the top-level parent")
	assert.Equal(t, "ses_G", p.Subagents[0].SessionID, "newest start first")
	assert.Equal(t, 2, p.Subagents[0].Depth)
	assert.Equal(t, "ses_C1", p.Subagents[0].ParentID)
	assert.Equal(t, subagents.Running, p.Subagents[1].State)
	assert.Equal(t, "Find the tests", p.Subagents[1].Label)
	assert.Equal(t, 2, p.Parent.Subagents)
	assert.Equal(t, 2, p.Parent.Running)

	// A message growing: its figures replaced, counted once.
	for _, m := range []subagents.Message{msg("ses_C1", "msg_1", 10, 0, 0, false), msg("ses_C1", "msg_1", 10, 5, 0.01, false), msg("ses_C1", "msg_1", 10, 8, 0.02, true)} {
		_, err = s.SubagentMessage(ctx, m)
		require.NoError(t, err)
	}
	_, err = s.SubagentMessage(ctx, msg("ses_G", "msg_9", 100, 1, 0.5, true))
	require.NoError(t, err)
	_, err = s.SubagentMessage(ctx, msg("ses_P", "msg_0", 1, 1, 0.001, true))
	require.NoError(t, err)
	p = page(t, s, "ses_P")
	c1 := p.Subagents[1]
	assert.Equal(t, subagents.Tokens{Input: 10, Output: 8, CacheRead: 20}, c1.Tokens)
	assert.InDelta(t, 0.02, c1.Cost, 1e-9)
	assert.Equal(t, "fake/fake-model", c1.Model)
	require.NotNil(t, c1.Context)
	assert.Equal(t, int64(38), c1.Context.Used)
	require.NotNil(t, c1.CacheShare)
	assert.InDelta(t, 20.0/30.0, *c1.CacheShare, 1e-9)
	assert.InDelta(t, 0.001, p.Parent.Own.Cost, 1e-9)
	assert.InDelta(t, 0.521, p.Parent.Total.Cost, 1e-9, "total is own plus every descendant")
	assert.Equal(t, int64(111), p.Parent.Total.Tokens.Input)

	// Retry, then an abort, then idle: cancelled stays.
	next := at(12)
	_, err = s.SubagentStatus(ctx, "ses_G", subagents.RetryScheduled, &subagents.Retry{Attempt: 2, Next: &next, Message: "Rate limit reached"}, at(3))
	require.NoError(t, err)
	p = page(t, s, "ses_P")
	require.NotNil(t, p.Subagents[0].Retry)
	assert.Equal(t, subagents.Retrying, p.Subagents[0].State)
	assert.Equal(t, 2, p.Subagents[0].Retry.Attempt)
	assert.Equal(t, next, *p.Subagents[0].Retry.Next)
	_, err = s.SubagentEnded(ctx, "ses_G", subagents.Aborted, "", at(4))
	require.NoError(t, err)
	_, err = s.SubagentEnded(ctx, "ses_G", subagents.Idle, "", at(5))
	require.NoError(t, err)
	_, err = s.SubagentEnded(ctx, "ses_C1", subagents.Errored, "rate limit: Rate limit reached", at(6))
	require.NoError(t, err)
	p = page(t, s, "ses_P")
	assert.Equal(t, map[string]subagents.State{"ses_G": subagents.Cancelled, "ses_C1": subagents.Failed}, states(p))
	assert.Equal(t, "rate limit: Rate limit reached", p.Subagents[0].Error+p.Subagents[1].Error)
	assert.Equal(t, 0, p.Parent.Running)

	// A resume: busy makes it run again.
	_, err = s.SubagentStatus(ctx, "ses_C1", subagents.Busy, nil, at(7))
	require.NoError(t, err)
	p = page(t, s, "ses_P")
	assert.Equal(t, "ses_C1", p.Subagents[0].SessionID, "running first")
	assert.Empty(t, p.Subagents[0].Error)

	// The task call's alias and label.
	_, err = s.SubagentTask(ctx, subagents.Task{Session: "ses_C1", Parent: "ses_P", Alias: "exp-1", Label: "other", Agent: "other", At: at(8)})
	require.NoError(t, err)
	p = page(t, s, "ses_P")
	assert.Equal(t, "exp-1", p.Subagents[0].Alias)
	assert.False(t, p.Subagents[0].Resumable, "no entry holds it")
	assert.Equal(t, "Find the tests", p.Subagents[0].Label, "the title's label is kept")

	// A subagent's own page: its direct children, its figures with theirs.
	pc := page(t, s, "ses_C1")
	require.Len(t, pc.Subagents, 1)
	assert.InDelta(t, 0.52, pc.Parent.Total.Cost, 1e-9)
	assert.InDelta(t, 0.02, pc.Parent.Own.Cost, 1e-9)

	// Deleting a child takes its descendants and their figures.
	ch, err = s.Forget(ctx, "ses_C1")
	require.NoError(t, err)
	assert.Equal(t, []string{"ses_P"}, ch.Parents)
	p = page(t, s, "ses_P")
	assert.Empty(t, p.Subagents)
	assert.Equal(t, 0, p.Parent.Subagents)
	assert.InDelta(t, 0.001, p.Parent.Total.Cost, 1e-9)
	_, err = s.Forget(ctx, "ses_P")
	require.NoError(t, err)
	p = page(t, s, "ses_P")
	assert.Equal(t, subagents.Figures{}, p.Parent.Total)
}

// A running row whose writer is gone reads interrupted, for every
// reader, until OpenCode reports the child again.
func TestSubagentInterruptedWhenWriterGone(t *testing.T) {
	ctx := context.Background()
	path, s := subagentDB(t)
	_, err := s.SubagentStarted(ctx, subagents.Started{Session: "ses_C", Parent: "ses_P", At: at(0)})
	require.NoError(t, err)
	require.NoError(t, s.c.exec(ctx, "UPDATE subagents SET owner=?", 999999999))

	r := ReadSubagents(path)
	defer r.Close()
	p := page(t, r, "ses_P")
	assert.Equal(t, subagents.Interrupted, p.Subagents[0].State)
	assert.Equal(t, 0, p.Parent.Running)
	assert.Equal(t, subagents.Interrupted, page(t, s, "ses_P").Subagents[0].State)

	_, err = s.SubagentStatus(ctx, "ses_C", subagents.Busy, nil, at(1))
	require.NoError(t, err)
	assert.Equal(t, subagents.Running, page(t, r, "ses_P").Subagents[0].State, "reported again: running, written by a live process")
	_, err = s.SubagentEnded(ctx, "ses_C", subagents.Idle, "", at(2))
	require.NoError(t, err)
	assert.Equal(t, subagents.Done, page(t, r, "ses_P").Subagents[0].State)
}

// A task call's end stops a child the records still have at work (a
// session.idle that never reached them), in the call's own transaction;
// a child already ended keeps its state, a cancel included, and a call
// that left its child running changes no state.
func TestSubagentTaskEndStopsItsChild(t *testing.T) {
	tests := []struct {
		name   string
		before subagents.Event // the last event the records saw; Busy: running
		task   subagents.Task
		want   subagents.State
		reason string
	}{
		{"completed call, child still running", subagents.Busy, subagents.Task{Ended: true}, subagents.Done, ""},
		{"failed call, child still retrying", subagents.RetryScheduled, subagents.Task{Ended: true, Failed: true, Reason: "rate limit: slow down"}, subagents.Failed, "rate limit: slow down"},
		{"call left the child running", subagents.Busy, subagents.Task{}, subagents.Running, ""},
		{"failed call after esc esc: still cancelled", subagents.Aborted, subagents.Task{Ended: true, Failed: true, Reason: "aborted"}, subagents.Cancelled, ""},
		{"completed call after idle: done once", subagents.Idle, subagents.Task{Ended: true}, subagents.Done, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			_, s := subagentDB(t)
			_, err := s.SubagentStarted(ctx, subagents.Started{Session: "ses_C", Parent: "ses_P", At: at(0)})
			require.NoError(t, err)
			switch tt.before {
			case subagents.Busy, subagents.RetryScheduled:
				_, err = s.SubagentStatus(ctx, "ses_C", tt.before, &subagents.Retry{Attempt: 1, Message: "wait"}, at(1))
			default:
				_, err = s.SubagentEnded(ctx, "ses_C", tt.before, "", at(1))
			}
			require.NoError(t, err)
			task := tt.task
			task.Session, task.Parent, task.Alias, task.At = "ses_C", "ses_P", "exp-1", at(2)
			_, err = s.SubagentTask(ctx, task)
			require.NoError(t, err)
			row := page(t, s, "ses_P").Subagents[0]
			assert.Equal(t, tt.want, row.State)
			assert.Equal(t, "exp-1", row.Alias)
			if tt.reason != "" {
				assert.Equal(t, tt.reason, row.Error)
			}
		})
	}
}

// Two processes' writers on one file: every intent of both lands, one
// after the other, and the sums are exact.
func TestSubagentTwoWriters(t *testing.T) {
	ctx := context.Background()
	path, a := subagentDB(t)
	b, err := OpenSubagents(ctx, path)
	require.NoError(t, err)
	defer b.Close()
	var wg sync.WaitGroup
	for w, s := range []*Subagents{a, b} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 20 {
				child := fmt.Sprintf("ses_%d_%02d", w, i)
				_, err := s.SubagentStarted(ctx, subagents.Started{Session: child, Parent: "ses_P", At: at(i)})
				assert.NoError(t, err)
				for range 3 { // the same message three times: once
					_, err = s.SubagentMessage(ctx, msg(child, "msg_1", 10, 1, 0.25, true))
					assert.NoError(t, err)
				}
			}
		}()
	}
	wg.Wait()
	p, err := a.SubagentsOf(ctx, "ses_P", "", 200)
	require.NoError(t, err)
	assert.Len(t, p.Subagents, 40)
	assert.Equal(t, 40, p.Parent.Subagents)
	assert.InDelta(t, 10.0, p.Parent.Total.Cost, 1e-9)
	assert.Equal(t, int64(400), p.Parent.Total.Tokens.Input)
}

// At 5,000 subagents under one parent, a page reads its rows, the
// parent's row and the running ones: not the 5,000.
func TestSubagentPageReadsItsRows(t *testing.T) {
	ctx := context.Background()
	path, s := subagentDB(t)
	const n = 5000
	_, err := s.write(ctx, func(c *dbConn, tx *subTx) error {
		for i := range n {
			if err := c.exec(ctx, `INSERT INTO subagents(session, parent, root, depth, state, active, started_ns, owner, rev, cost)
				VALUES(?, 'ses_P', 'ses_P', 1, 'done', 0, ?, 0, 1, 0.001)`, fmt.Sprintf("ses_%05d", i), at(i).UnixNano()); err != nil {
				return err
			}
		}
		return c.exec(ctx, "INSERT INTO subagent_roots(root, n, a_cost, rev) VALUES('ses_P', ?, ?, 1)", n, float64(n)*0.001)
	})
	require.NoError(t, err)
	_, err = s.SubagentStarted(ctx, subagents.Started{Session: "ses_run", Parent: "ses_P", At: at(-1)})
	require.NoError(t, err)

	r := ReadSubagents(path)
	defer r.Close()
	seen := map[string]bool{}
	cursor := ""
	for pages := 0; pages < 3; pages++ {
		before := r.RowsRead()
		p, err := r.SubagentsOf(ctx, "ses_P", cursor, 24)
		require.NoError(t, err)
		read := r.RowsRead() - before
		assert.LessOrEqual(t, read, int64(24+1+1+1), "rows read for one page: its 24, one more, the parent's and the running one")
		require.Len(t, p.Subagents, 24)
		assert.Equal(t, n+1, p.Parent.Subagents)
		assert.Equal(t, 1, p.Parent.Running)
		if pages == 0 {
			assert.Equal(t, "ses_run", p.Subagents[0].SessionID, "running first though oldest")
			assert.Equal(t, "ses_04999", p.Subagents[1].SessionID)
		}
		for _, row := range p.Subagents {
			assert.False(t, seen[row.SessionID], "listed once")
			seen[row.SessionID] = true
		}
		require.NotEmpty(t, p.Next)
		cursor = p.Next
	}
	_, err = r.SubagentsOf(ctx, "ses_P", "nonsense", 24)
	assert.ErrorIs(t, err, subagents.ErrBadCursor)

	// What SQLite itself reads: each query walks an index in the page's
	// order, never every row nor a sort of them.
	for _, q := range []struct {
		sql  string
		args []any
	}{
		{subagentPageQuery(false, false), []any{"ses_P", 25}},
		{subagentPageQuery(false, true), []any{"ses_P", 0, at(100).UnixNano(), "ses_00100", 25}},
		{subagentPageQuery(true, true), []any{"ses_P", 0, at(100).UnixNano(), "ses_00100", 25}},
		{"SELECT owner, count(*) FROM subagents WHERE root=? AND active=1 GROUP BY owner", []any{"ses_P"}},
	} {
		rows, err := s.c.conn.QueryContext(ctx, "EXPLAIN QUERY PLAN "+q.sql, q.args...)
		require.NoError(t, err)
		var plan []string
		for rows.Next() {
			var id, parent, notused int
			var detail string
			require.NoError(t, rows.Scan(&id, &parent, &notused, &detail))
			plan = append(plan, detail)
		}
		rows.Close()
		joined := strings.Join(plan, "; ")
		assert.Contains(t, joined, "SEARCH subagents USING", q.sql)
		assert.NotContains(t, joined, "SCAN subagents", q.sql)
		if !strings.Contains(q.sql, "GROUP BY") {
			assert.NotContains(t, strings.SplitN(joined, "SEARCH e", 2)[0], "TEMP B-TREE FOR ORDER BY", "the inner page is read in the index's order: %s", joined)
		}
	}
}

// The observer's check: nothing read when nothing was committed; the
// parents whose rows changed when something was.
func TestSubagentChanges(t *testing.T) {
	ctx := context.Background()
	path, s := subagentDB(t)
	_, err := s.SubagentStarted(ctx, subagents.Started{Session: "ses_A1", Parent: "ses_A", At: at(0)})
	require.NoError(t, err)
	r := ReadSubagents(path)
	defer r.Close()
	got, err := r.Changes(ctx)
	require.NoError(t, err)
	assert.Empty(t, got, "the first look sets where to start")
	before := r.RowsRead()
	for range 5 {
		got, err = r.Changes(ctx)
		require.NoError(t, err)
		assert.Empty(t, got)
	}
	assert.Equal(t, before, r.RowsRead(), "at rest: no rows read")

	_, err = s.SubagentStarted(ctx, subagents.Started{Session: "ses_B1", Parent: "ses_B", At: at(1)})
	require.NoError(t, err)
	_, err = s.SubagentMessage(ctx, msg("ses_A1", "msg_1", 1, 1, 0, true))
	require.NoError(t, err)
	got, err = r.Changes(ctx)
	require.NoError(t, err)
	assert.ElementsMatch(t, []string{"ses_A", "ses_B"}, got)
	got, err = r.Changes(ctx)
	require.NoError(t, err)
	assert.Empty(t, got)
}

// The tables' caps: the oldest subagents go first.
func TestSubagentCap(t *testing.T) {
	ctx := context.Background()
	_, s := subagentDB(t)
	_, err := s.write(ctx, func(c *dbConn, tx *subTx) error {
		for i := range MaxSubagents + 10 {
			if err := c.exec(ctx, `INSERT INTO subagents(session, parent, root, depth, state, active, started_ns, owner, rev)
				VALUES(?, 'ses_P', 'ses_P', 1, 'done', 0, ?, 0, 1)`, fmt.Sprintf("ses_%05d", i), at(i).UnixNano()); err != nil {
				return err
			}
		}
		return c.exec(ctx, "INSERT INTO subagent_roots(root, n, rev) VALUES('ses_P', ?, 1)", MaxSubagents+10)
	})
	require.NoError(t, err)
	_, err = s.write(ctx, func(c *dbConn, tx *subTx) error { return pruneSubagents(ctx, c) })
	require.NoError(t, err)
	var n int
	var oldest string
	require.NoError(t, s.c.queryRow(ctx, "SELECT count(*), min(session) FROM subagents").Scan(&n, &oldest))
	assert.Equal(t, MaxSubagents, n)
	assert.Equal(t, "ses_00010", oldest)
	p, err := s.ParentFigures(ctx, "ses_P")
	require.NoError(t, err)
	assert.Equal(t, MaxSubagents, p.Subagents)
}

// Sessions with messages and no subagents are parents with their own
// figures: their rows stay within the parents' cap, the least recently
// used out first.
func TestSubagentParentsCap(t *testing.T) {
	ctx := context.Background()
	_, s := subagentDB(t)
	_, err := s.write(ctx, func(c *dbConn, tx *subTx) error {
		for i := range MaxSubagentParents + 5 {
			if err := c.exec(ctx, "INSERT INTO subagent_roots(root, used_ns, rev) VALUES(?, ?, 1)", fmt.Sprintf("ses_%05d", i), at(i).UnixNano()); err != nil {
				return err
			}
		}
		return nil
	})
	require.NoError(t, err)
	for i := range pruneEvery {
		m := msg("ses_new", fmt.Sprintf("msg_%02d", i), 1, 1, 0, true)
		m.At = at(MaxSubagentParents + 10)
		_, err := s.SubagentMessage(ctx, m)
		require.NoError(t, err)
	}
	var n int
	require.NoError(t, s.c.queryRow(ctx, "SELECT count(*) FROM subagent_roots").Scan(&n))
	assert.Equal(t, MaxSubagentParents, n)
	p, err := s.ParentFigures(ctx, "ses_new")
	require.NoError(t, err)
	assert.Equal(t, int64(pruneEvery), p.Own.Tokens.Input, "the newest kept")
	p, err = s.ParentFigures(ctx, "ses_00000")
	require.NoError(t, err)
	assert.Equal(t, subagents.Parent{SessionID: "ses_00000"}, p, "the oldest gone")
}

// hookwire forget: --all takes the subagents' records too, --parent those
// of that session and below it (a deleted session's records go with it).
func TestForgetSubagents(t *testing.T) {
	ctx := context.Background()
	path, s := subagentDB(t)
	for _, st := range []subagents.Started{{Session: "ses_A1", Parent: "ses_A"}, {Session: "ses_A2", Parent: "ses_A1"}, {Session: "ses_B1", Parent: "ses_B"}} {
		_, err := s.SubagentStarted(ctx, st)
		require.NoError(t, err)
	}
	done, err := Forget(ctx, path, ForgetSpec{Parent: "ses_A"})
	require.NoError(t, err)
	assert.Equal(t, 2, done.Subagents)
	assert.Empty(t, page(t, s, "ses_A").Subagents)
	assert.Len(t, page(t, s, "ses_B").Subagents, 1)
	done, err = Forget(ctx, path, ForgetSpec{All: true})
	require.NoError(t, err)
	assert.Equal(t, 1, done.Subagents)
	assert.Empty(t, page(t, s, "ses_B").Subagents)
}

// BenchmarkSubagentsPage: subagents.list's first page at 5,000 subagents
// under one parent, read as the observer reads it (a kept read-only
// connection), and its rows read per call (issue 51: 87 ms and 1.15 MB a
// poll before).
func BenchmarkSubagentsPage(b *testing.B) {
	ctx := context.Background()
	path := filepath.Join(b.TempDir(), "state.db")
	d, err := OpenDatabase(ctx, path, newTestStore(sessions.Config{}), zerolog.Nop())
	require.NoError(b, err)
	defer d.Close()
	_, err = d.Subagents().write(ctx, func(c *dbConn, tx *subTx) error {
		for i := range 5000 {
			if err := c.exec(ctx, `INSERT INTO subagents(session, parent, root, depth, state, active, started_ns, owner, rev, cost)
				VALUES(?, 'ses_P', 'ses_P', 1, 'done', 0, ?, 0, 1, 0.001)`, fmt.Sprintf("ses_%05d", i), at(i).UnixNano()); err != nil {
				return err
			}
		}
		return c.exec(ctx, "INSERT INTO subagent_roots(root, n, rev) VALUES('ses_P', 5000, 1)")
	})
	require.NoError(b, err)
	r := ReadSubagents(path)
	defer r.Close()
	before := r.RowsRead()
	for b.Loop() {
		if _, err := r.SubagentsOf(ctx, "ses_P", "", 24); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(r.RowsRead()-before)/float64(b.N), "rows/op")
}

// The revision never goes back: after the newest rows are deleted, the
// observer still sees the writes that follow.
func TestSubagentChangesAfterDelete(t *testing.T) {
	ctx := context.Background()
	path, s := subagentDB(t)
	r := ReadSubagents(path)
	defer r.Close()
	for _, id := range []string{"ses_A", "ses_B"} {
		_, err := s.SubagentStarted(ctx, subagents.Started{Session: id + "1", Parent: id, At: at(0)})
		require.NoError(t, err)
	}
	_, err := r.Changes(ctx)
	require.NoError(t, err)
	_, err = s.Forget(ctx, "ses_B") // the newest rows go
	require.NoError(t, err)
	got, err := r.Changes(ctx)
	require.NoError(t, err)
	assert.Empty(t, got, "a deleted parent has nothing left to show")
	_, err = s.SubagentStatus(ctx, "ses_A1", subagents.RetryScheduled, &subagents.Retry{Attempt: 1}, at(1))
	require.NoError(t, err)
	got, err = r.Changes(ctx)
	require.NoError(t, err)
	assert.Equal(t, []string{"ses_A"}, got)
}
