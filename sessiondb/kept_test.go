package sessiondb

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hookwire/hookwire/core"

	"github.com/hookwire/hookwire/sessions"
)

// What the store keeps past its bounds, kept in memory and kept in a
// database alike (each has its own prune), as the store's exported
// methods and a later reader of the file (hookwire sessions) see it.

var storeKinds = []struct {
	name string
	db   bool
}{{"memory", false}, {"database", true}}

// openKind is a new store with cfg, kept in a new database when db; path
// is the database's ("" in memory).
func openKind(t *testing.T, db bool, cfg sessions.Config) (s *sessions.Store, path string) {
	t.Helper()
	s = sessions.New(cfg)
	if !db {
		return s, ""
	}
	path = filepath.Join(t.TempDir(), "state.db")
	d, err := OpenDatabase(context.Background(), path, s, zerolog.Nop())
	require.NoError(t, err)
	t.Cleanup(func() { d.Close() })
	require.Equal(t, sessions.StatePersistent, d.State().Mode, d.State().Reason)
	return s, path
}

// reopened is what a later process on path reads, nil in memory.
func reopened(t *testing.T, path string) *StateContents {
	t.Helper()
	if path == "" {
		return nil
	}
	got, err := ReadState(path)
	require.NoError(t, err)
	return &got
}

// A parent alone over the byte budget is the one in use: it is kept, with
// its aliases and its frozen block; with another parent, the less
// recently active one goes.
func TestLoneParentOverTheBudgetIsKept(t *testing.T) {
	block := "### Resumable Sessions\n" + strings.Repeat("- explorer: exp-1 a long label\n", 300)
	for _, kind := range storeKinds {
		t.Run(kind.name, func(t *testing.T) {
			s, path := openKind(t, kind.db, sessions.Config{MaxStateBytes: 4000})
			doTask(t, s, "call_1", "p1", "explorer", "one", "ses_a")
			doTask(t, s, "call_2", "p1", "oracle", "two", "ses_b")
			assert.Equal(t, block, s.Frozen().Block(context.Background(), "p1", "msg_1", func() string { return block })) // over the budget alone
			want := []string{"ora-1 ses_b", "exp-1 ses_a"}
			assert.Equal(t, want, aliasesOf(s.Tasks().List("p1")))
			assert.Equal(t, block, s.Frozen().Block(context.Background(), "p1", "msg_1", func() string { return "computed again" }))
			if got := reopened(t, path); got != nil {
				assert.Equal(t, want, aliasesOf(got.Sessions), "a later process finds the aliases")
				assert.Equal(t, 1, got.FrozenBlocks)
			}

			s.Frozen().Block(context.Background(), "p2", "msg_2", func() string { return "newer" })
			assert.Empty(t, s.Tasks().List("p1"), "the older parent is forgotten")
			assert.Equal(t, "newer", s.Frozen().Block(context.Background(), "p2", "msg_2", func() string { return "computed again" }))
			if got := reopened(t, path); got != nil {
				assert.Empty(t, got.Sessions)
				assert.Equal(t, 1, got.Parents)
			}
		})
	}
}

// Past MaxHealthModels, the oldest failures are forgotten, whatever order
// they were reported in: the newest failure is never the one deleted.
func TestHealthBoundsKeepTheNewestFailures(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	const n = sessions.MaxHealthModels + 5
	rows := []struct {
		db    bool
		order string
	}{{false, "oldest first"}, {false, "newest first"}, {true, "newest first"}} // the database's is the slow one
	for _, row := range rows {
		name, order := "memory/"+row.order, row.order
		if row.db {
			name = "database/" + row.order
		}
		t.Run(name, func(t *testing.T) {
			s, path := openKind(t, row.db, sessions.Config{})
			for k := range n {
				i := k
				if order == "newest first" {
					i = n - 1 - k
				}
				s.ProviderHealth().Set(context.Background(), fmt.Sprintf("p/m%d", i), core.ModelHealth{Until: t0.Add(2 * time.Hour), Strikes: 1, Last: t0.Add(time.Duration(i) * time.Second), Class: core.FailureRateLimit})
			}
			lists := map[string][]sessions.Health{"this process": s.ProviderHealth().List()}
			if got := reopened(t, path); got != nil {
				lists["a later reader"] = got.Health
			}
			for who, list := range lists {
				require.Len(t, list, sessions.MaxHealthModels, who)
				assert.Equal(t, fmt.Sprintf("p/m%d", n-1), list[0].Model, "%s: the newest failure first", who)
				assert.Equal(t, "p/m5", list[len(list)-1].Model, "%s: the oldest kept", who)
			}
			assert.True(t, s.ProviderHealth().Cooling(fmt.Sprintf("p/m%d", n-1), t0), "the newest failure still cools")
			_, kept := s.ProviderHealth().Of("p/m4")
			assert.False(t, kept, "the oldest failures are forgotten")
		})
	}
}

// Past MaxCacheSessions, the least recently used session's figures go:
// never those of the session just used.
func TestCacheBoundsKeepTheMostRecentlyUsed(t *testing.T) {
	for _, kind := range storeKinds {
		t.Run(kind.name, func(t *testing.T) {
			s, path := openKind(t, kind.db, sessions.Config{})
			for i := range sessions.MaxCacheSessions + 10 {
				s.PromptCache().Usage(context.Background(), sessions.Usage{Session: fmt.Sprintf("ses_%d", i), Message: "a1", CacheRead: 1})
			}
			s.PromptCache().Usage(context.Background(), sessions.Usage{Session: "ses_10", Message: "a2", CacheRead: 1}) // the oldest kept, used again
			s.PromptCache().Usage(context.Background(), sessions.Usage{Session: "ses_new", Message: "a1", CacheRead: 1})
			lists := map[string][]sessions.CacheSession{"this process": s.PromptCache().List()}
			if got := reopened(t, path); got != nil {
				lists["a later reader"] = got.Cache
			}
			for who, list := range lists {
				require.Len(t, list, sessions.MaxCacheSessions, who)
				names := make(map[string]bool, len(list))
				for _, c := range list {
					names[c.Session] = true
				}
				assert.Equal(t, "ses_new", list[0].Session, "%s: the most recently used first", who)
				assert.Equal(t, "ses_10", list[1].Session, who)
				assert.True(t, names["ses_10"], "%s: a session used again is kept", who)
				assert.False(t, names["ses_11"], "%s: the least recently used goes", who)
				assert.False(t, names["ses_9"], who)
				assert.True(t, names[fmt.Sprintf("ses_%d", sessions.MaxCacheSessions+9)], who)
			}
		})
	}
}

// OpenCode reports an assistant message more than once. A bust reported
// again with newer figures that are still a bust is one bust, not two in a
// row (which would tell the user the cache was missed twice).
func TestCacheBustReportedAgainIsOneBust(t *testing.T) {
	prompt := func(ids ...string) *core.PromptPrint {
		p := &core.PromptPrint{}
		for _, id := range ids {
			p.Messages = append(p.Messages, core.MessagePrint{ID: core.HashID(id), Content: 1})
		}
		return p
	}
	usage := func(msg string, cacheRead int64) sessions.Usage {
		return sessions.Usage{Session: "ses_p", Message: msg, Model: "fake/m", Input: 10, Output: 5, CacheRead: cacheRead}
	}
	for _, kind := range storeKinds {
		t.Run(kind.name, func(t *testing.T) {
			s, path := openKind(t, kind.db, sessions.Config{})
			s.PromptCache().Prompt("ses_p", prompt("u1"))
			s.PromptCache().System("ses_p", 1, 5)
			_, inARow := s.PromptCache().Usage(context.Background(), usage("a1", 100))
			assert.False(t, inARow)
			s.PromptCache().Prompt("ses_p", prompt("u1", "a1"))
			s.PromptCache().System("ses_p", 1, 6) // hookwire's block changed: a bust
			bust, inARow := s.PromptCache().Usage(context.Background(), usage("a2", 10))
			require.NotNil(t, bust)
			assert.False(t, inARow)
			for _, read := range []int64{20, 30} { // the same message, newer figures, still a bust
				bust, inARow = s.PromptCache().Usage(context.Background(), usage("a2", read))
				require.NotNil(t, bust, "still a bust")
				assert.False(t, inARow, "one bust is not two in a row")
			}
			lists := map[string][]sessions.CacheSession{"this process": s.PromptCache().List()}
			if got := reopened(t, path); got != nil {
				lists["a later reader"] = got.Cache
			}
			for who, list := range lists {
				require.Len(t, list, 1, who)
				c := list[0]
				assert.Equal(t, int64(2), c.Requests, who)
				assert.Equal(t, int64(1), c.BustCount, who)
				assert.Equal(t, 1, c.BustsInARow, who)
				assert.Equal(t, int64(70), c.TokensLost, who)
				assert.Equal(t, int64(130), c.CacheReadTokens, who)
				require.Len(t, c.Busts, 1, who)
				assert.Equal(t, "a2", c.Busts[0].Message, who)
			}
		})
	}
}

// A hookwire database damaged on disk (SQLite: malformed) is moved aside
// whole, with a warning, and a new one serves: the sidecar keeps aliases.
func TestDamagedDatabaseMovedAside(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	s := sessions.New(sessions.Config{})
	d, err := OpenDatabase(context.Background(), path, s, zerolog.Nop())
	require.NoError(t, err)
	doTask(t, s, "call_1", "p1", "explorer", "one", "ses_a")
	require.NoError(t, d.Close())
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	data[100] = 0xff // the schema page's b-tree header: no page type
	require.NoError(t, os.WriteFile(path, data, 0o600))

	s2 := sessions.New(sessions.Config{})
	d2, err := OpenDatabase(context.Background(), path, s2, zerolog.Nop())
	require.NoError(t, err)
	t.Cleanup(func() { d2.Close() })
	st := d2.State()
	assert.Equal(t, sessions.StatePersistent, st.Mode, st.Reason)
	require.Len(t, st.Warnings, 1)
	assert.Contains(t, st.Warnings[0], "moved to "+path+".corrupt-")
	matches, _ := filepath.Glob(path + ".corrupt-*")
	require.Len(t, matches, 1)
	aside, err := os.ReadFile(matches[0])
	require.NoError(t, err)
	assert.Equal(t, data, aside, "moved, never changed")

	doTask(t, s2, "call_2", "p1", "explorer", "two", "ses_b")
	got, err := ReadState(path)
	require.NoError(t, err)
	assert.Equal(t, []string{"exp-1 ses_b"}, aliasesOf(got.Sessions), "the new database keeps new aliases")
}

// A state directory other users can write to (the group or everyone) is
// warned about when the database opens; one only its owner writes is not.
func TestStateDirectoryWritableByOthersWarned(t *testing.T) {
	for _, tt := range []struct {
		mode os.FileMode
		warn bool
	}{
		{0o700, false}, {0o755, false},
		{0o770, true}, {0o730, true}, {0o707, true}, {0o777, true},
	} {
		t.Run(fmt.Sprintf("%04o", tt.mode), func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "state")
			require.NoError(t, os.Mkdir(dir, 0o700))
			require.NoError(t, os.Chmod(dir, tt.mode))
			s := sessions.New(sessions.Config{})
			d, err := OpenDatabase(context.Background(), filepath.Join(dir, "state.db"), s, zerolog.Nop())
			require.NoError(t, err)
			t.Cleanup(func() { d.Close() })
			st := d.State()
			assert.Equal(t, sessions.StatePersistent, st.Mode)
			if !tt.warn {
				assert.Empty(t, st.Warnings)
				return
			}
			require.Len(t, st.Warnings, 1)
			assert.Contains(t, st.Warnings[0], "writable by others")
			assert.Contains(t, st.Warnings[0], fmt.Sprintf("%04o", tt.mode))
		})
	}
}
