package sessiondb

import (
	"context"
	"fmt"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hookwire/hookwire/sessions"
)

// allPages reads every page of parent's entries, limit at a time.
func allPages(t *testing.T, s *sessions.Store, parent string, limit int) (entries []sessions.Entry, pages int) {
	t.Helper()
	for cursor := ""; ; {
		page, err := s.Tasks().Page(context.Background(), parent, cursor, limit)
		require.NoError(t, err)
		require.LessOrEqual(t, len(page.Entries), sessions.ClampLimit(limit))
		entries = append(entries, page.Entries...)
		pages++
		if cursor = page.Next; cursor == "" {
			return entries, pages
		}
		require.Len(t, page.Entries, sessions.ClampLimit(limit), "only the last page is short")
	}
}

// Paging through the entries, in the database and in memory, gives what
// List gives, in its order, each entry once; a parent's pages its own.
func TestPageListsWhatListGives(t *testing.T) {
	fill := func(h *harness) {
		for i := range 25 {
			p := "ses_p" + strconv.Itoa(i%7)
			h.task(p, []string{"explorer", "oracle", "build"}[i%3], "task "+strconv.Itoa(i), fmt.Sprintf("ses_t%02d", i))
		}
		h.s.Tracked().SetModelDecision(context.Background(), "ses_t03", sessions.ModelDecision{Model: "fake/m2", Rung: "agent"})
		h.s.Tracked().AddSwitch(context.Background(), "ses_t03", sessions.Switch{From: "fake/m1", To: "fake/m2", Reason: "rate limit", At: epoch})
	}
	stores := map[string]func(t *testing.T) *harness{
		"memory-only": func(t *testing.T) *harness { return newHarness(t, sessions.Config{MaxSessionsPerAgent: 10}) },
		"database": func(t *testing.T) *harness {
			h, _ := dbHarness(t, filepath.Join(t.TempDir(), "state.db"), sessions.Config{MaxSessionsPerAgent: 10})
			return h
		},
	}
	for name, mk := range stores {
		h := mk(t)
		fill(h)
		want := h.s.Tasks().List("")
		require.Len(t, want, 25)
		for _, tt := range []struct {
			limit, pages int
		}{{1, 25}, {4, 7}, {25, 1}, {24, 2}, {0, 1}, {5000, 1}} {
			t.Run(fmt.Sprintf("%s limit %d", name, tt.limit), func(t *testing.T) {
				got, pages := allPages(t, h.s, "", tt.limit)
				assert.Equal(t, want, got)
				assert.Equal(t, tt.pages, pages)
			})
		}
		t.Run(name+" one parent", func(t *testing.T) {
			got, _ := allPages(t, h.s, "ses_p3", 2)
			assert.Equal(t, h.s.Tasks().List("ses_p3"), got)
			require.NotEmpty(t, got)
			for _, e := range got {
				assert.Equal(t, "ses_p3", e.Parent)
			}
			none, _ := allPages(t, h.s, "ses_nobody", 2)
			assert.Empty(t, none)
		})
		t.Run(name+" a cursor no page gave", func(t *testing.T) {
			for _, c := range []string{"forged", "eyJ0IjoxfQ", "!!"} {
				_, err := h.s.Tasks().Page(context.Background(), "", c, 2)
				assert.ErrorIs(t, err, sessions.ErrBadCursor, c)
			}
		})
	}
}

// A serving store reads a page without holding its mutex: while a page
// is part read, the store's lock is free and a hook's task call (a write
// transaction) is answered and committed; the page goes on from the state
// it began with (issue 30 item 13).
func TestPageNeverHoldsTheStore(t *testing.T) {
	h, _ := dbHarness(t, filepath.Join(t.TempDir(), "state.db"), sessions.Config{MaxParents: 5000})
	for i := range 300 {
		h.task("ses_p"+strconv.Itoa(i), "explorer", "a task", "ses_t"+strconv.Itoa(i))
	}
	var order []string
	rows := 0
	listPause = func() {
		rows++
		if rows != 100 {
			return
		}
		order = append(order, "page part read")
		// The store is not locked: were it, this call would wait for the
		// page and the test would never end.
		h.task("ses_new", "explorer", "while listing", "ses_tnew") // a hook's call, answered now
		order = append(order, "hook answered")
	}
	t.Cleanup(func() { listPause = nil })
	page, err := h.s.Tasks().Page(context.Background(), "", "", 300)
	require.NoError(t, err)
	order = append(order, "page done")
	assert.Equal(t, []string{"page part read", "hook answered", "page done"}, order)
	require.Len(t, page.Entries, 300)
	assert.Equal(t, "ses_t299", page.Entries[0].TaskID, "the page's state is the one it began with")
	assert.Equal(t, "ses_tnew", h.s.Tasks().List("")[0].TaskID, "the hook's entry is kept")
	listPause = nil
	next, err := h.s.Tasks().Page(context.Background(), "", "", 1)
	require.NoError(t, err)
	assert.Equal(t, "ses_tnew", next.Entries[0].TaskID, "the next page sees it")
}
