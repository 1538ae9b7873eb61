package sessiondb

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/rs/zerolog"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hookwire/hookwire/sessions"
)

// PromptCache.Of gives one session's figures as List does, for a session this
// process counted, one only another process counted, and none for a
// session nobody counted: a bust in a row tells the client those without
// reading every session's row.
func TestCacheOfMatchesCacheList(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	a, _ := dbHarness(t, path, sessions.Config{})
	b, _ := dbHarness(t, path, sessions.Config{})
	ctx := context.Background()
	a.task("ses_parent", "explore", "look", "ses_mine")
	for i, read := range []int64{100, 50, 20} {
		a.s.PromptCache().Usage(ctx, sessions.Usage{Session: "ses_mine", Message: fmt.Sprint("m", i), Model: "fake/m", Input: 3, CacheRead: read})
	}
	b.s.PromptCache().Usage(ctx, sessions.Usage{Session: "ses_theirs", Message: "t1", Model: "fake/m", Input: 5, CacheRead: 9, CacheWrite: 4})

	list := map[string]sessions.CacheSession{}
	for _, c := range a.s.PromptCache().List() {
		list[c.Session] = c
	}
	require.Len(t, list, 2)
	for _, session := range []string{"ses_mine", "ses_theirs"} {
		got, ok := a.s.PromptCache().Of(session)
		require.True(t, ok, session)
		assert.Equal(t, list[session], got, session)
	}
	mine, _ := a.s.PromptCache().Of("ses_mine")
	assert.Equal(t, 2, mine.BustsInARow)
	assert.Equal(t, "ses_parent", mine.Parent)
	assert.Equal(t, "explore", mine.Agent)
	_, ok := a.s.PromptCache().Of("ses_nobody")
	assert.False(t, ok)
}

// BenchmarkCacheUsageEvent: the store's work for a usage event with a full
// prompt-cache table (256 sessions' rows): a plain one, and a bust in a
// row, which also reads the session's figures to tell the client (once
// every row, PromptCache.List; now its own, PromptCache.Of). Report the ratio of
// bust-in-a-row to plain from one run.
func BenchmarkCacheUsageEvent(b *testing.B) {
	path := filepath.Join(b.TempDir(), "state.db")
	s := newTestStore(sessions.Config{})
	d, err := OpenDatabase(b.Context(), path, s, zerolog.Nop())
	require.NoError(b, err)
	b.Cleanup(func() { d.Close() })
	ctx := context.Background()
	for i := range sessions.MaxCacheSessions {
		s.PromptCache().Usage(ctx, sessions.Usage{Session: fmt.Sprintf("ses_%03d", i), Message: "m0", Model: "fake/m", Input: 10, CacheRead: 1000})
	}
	n := 0
	event := func(session string, read int64) (*sessions.CacheBust, bool) {
		n++
		return s.PromptCache().Usage(ctx, sessions.Usage{Session: session, Message: fmt.Sprint("m", n), Model: "fake/m", Input: 10, CacheRead: read})
	}
	b.Run("plain", func(b *testing.B) {
		for b.Loop() {
			event("ses_000", 1000)
		}
	})
	b.Run("bust-in-a-row", func(b *testing.B) {
		read := int64(1 << 40)
		event("ses_001", read)
		for b.Loop() {
			read--
			if _, inARow := event("ses_001", read); inARow {
				s.PromptCache().Of("ses_001")
			}
		}
	})
	b.Run("bust-in-a-row-reading-every-row", func(b *testing.B) {
		read := int64(1 << 40)
		event("ses_002", read)
		for b.Loop() {
			read--
			if _, inARow := event("ses_002", read); inARow {
				s.PromptCache().List()
			}
		}
	})
}
