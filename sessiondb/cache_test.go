package sessiondb

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hookwire/hookwire/core"

	"github.com/hookwire/hookwire/sessions"
)

// cacheStep is one thing a session's cache accounting sees: a prompt on its
// way (chat.messages.transform with msgs, then chat.system.transform with
// sys/block unless noSystem), or a usage.
type cacheStep struct {
	prompt   []string // message ids of the history; content = 1, ops from opsOf
	opsOf    map[string]uint64
	sys      uint64
	block    uint64
	noSystem bool
	usage    *sessions.Usage
	// What the usage step must give.
	bust   *core.Bust
	inARow bool
}

func promptOf(st cacheStep) *core.PromptPrint {
	p := &core.PromptPrint{}
	for _, id := range st.prompt {
		p.Messages = append(p.Messages, core.MessagePrint{ID: core.HashID(id), Content: 1, Ops: st.opsOf[id]})
	}
	return p
}

func use(msg string, cacheRead int64) *sessions.Usage {
	return &sessions.Usage{Session: "ses_p", Message: msg, Model: "fake/m", Input: 10, Output: 5, CacheRead: cacheRead}
}

func playCache(t *testing.T, s *sessions.Store, steps []cacheStep) {
	t.Helper()
	for i, st := range steps {
		if st.usage == nil {
			s.PromptCache().Prompt("ses_p", promptOf(st))
			if !st.noSystem {
				s.PromptCache().System("ses_p", st.sys, st.block)
			}
			continue
		}
		bust, inARow := s.PromptCache().Usage(context.Background(), *st.usage)
		if st.bust == nil {
			assert.Nil(t, bust, "step %d", i)
		} else if assert.NotNil(t, bust, "step %d", i) {
			assert.Equal(t, *st.bust, bust.Bust, "step %d", i)
		}
		assert.Equal(t, st.inARow, inARow, "step %d", i)
	}
}

// In the state database: the figures are written through, a second
// process (the next `opencode run --session`) reads them through and
// compares its first request with the first process's last, and readers
// (hookwire sessions) list every process's rows. session.deleted removes
// the row.
func TestCacheInDatabase(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	first := sessions.New(sessions.Config{})
	d1, _ := openTestDB(t, path, first)
	require.Equal(t, sessions.StatePersistent, d1.State().Mode)
	first.Tracked().SetAgent(context.Background(), "ses_p", "orchestrator")
	playCache(t, first, []cacheStep{
		{prompt: []string{"u1"}, sys: 1, block: 5}, {usage: use("a1", 100)},
		{prompt: []string{"u1", "a1"}, sys: 1, block: 6},
		{usage: use("a2", 10), bust: &core.Bust{Cause: core.CauseSystem, ByHookwire: true, Detail: "system prompt changed by hookwire (its Resumable Sessions block)"}},
	})

	second := sessions.New(sessions.Config{})
	openTestDB(t, path, second)
	second.PromptCache().Prompt("ses_p", promptOf(cacheStep{prompt: []string{"u1", "a1", "a2"}}))
	second.PromptCache().System("ses_p", 1, 7)
	bust, inARow := second.PromptCache().Usage(context.Background(), *use("a3", 5))
	require.NotNil(t, bust, "compared with the first process's last request")
	assert.True(t, bust.ByHookwire)
	assert.True(t, inARow)
	second.PromptCache().Usage(context.Background(), sessions.Usage{Session: "ses_other", Message: "b1", CacheRead: 7})

	got, err := ReadState(path)
	require.NoError(t, err)
	require.Len(t, got.Cache, 2)
	assert.Equal(t, "ses_other", got.Cache[0].Session, "the most recently used first")
	p := got.Cache[1]
	assert.Equal(t, "orchestrator", p.Agent)
	assert.Equal(t, int64(3), p.Requests)
	assert.Equal(t, int64(115), p.CacheReadTokens)
	assert.Len(t, p.Busts, 2)
	assert.Equal(t, got.Cache, first.PromptCache().List(), "a process lists every process's figures")

	first.DeleteSession(context.Background(), "ses_p")
	got, err = ReadState(path)
	require.NoError(t, err)
	require.Len(t, got.Cache, 1)
	assert.Equal(t, "ses_other", got.Cache[0].Session)
}

// A JSON state file of an earlier build with figures is imported into the
// database with them (hookwire replay starts a recording from one).
func TestCacheImportedFromJSON(t *testing.T) {
	s := sessions.New(sessions.Config{})
	s.PromptCache().Usage(context.Background(), sessions.Usage{Session: "ses_old", Message: "a1", Input: 4, CacheRead: 6})
	s.PromptCache().Usage(context.Background(), sessions.Usage{Session: "ses_new", Message: "a1", Input: 1})
	data, err := s.Snapshot()
	require.NoError(t, err)
	path := filepath.Join(t.TempDir(), "state.json")
	require.NoError(t, os.WriteFile(path, data, 0o600))

	r := sessions.New(sessions.Config{})
	openTestDB(t, path, r) // migrated in place
	got, err := ReadState(path)
	require.NoError(t, err)
	require.Len(t, got.Cache, 2)
	assert.Equal(t, []string{"ses_new", "ses_old"}, []string{got.Cache[0].Session, got.Cache[1].Session})
	assert.Equal(t, int64(6), got.Cache[1].CacheReadTokens)
	assert.Equal(t, got.Cache, r.PromptCache().List())
}

// A task session's requests come before its tool.execute.after makes its
// entry: the parent is recorded with its figures then.
func TestCacheParentFromCompletedCall(t *testing.T) {
	for _, withDB := range []bool{false, true} {
		t.Run(fmt.Sprintf("database=%v", withDB), func(t *testing.T) {
			s := sessions.New(sessions.Config{MaxSessionsPerAgent: 1})
			if withDB {
				openTestDB(t, filepath.Join(t.TempDir(), "state.db"), s)
			}
			s.Tasks().BeginCall(context.Background(), "c1", "ses_p", "explorer", "look", "")
			s.PromptCache().Usage(context.Background(), sessions.Usage{Session: "ses_c1", Message: "a1", CacheRead: 5}) // the child runs: no entry yet
			s.Tasks().CompleteCall(context.Background(), "c1", core.TaskOutcome{TaskID: "ses_c1"})
			s.Tasks().BeginCall(context.Background(), "c2", "ses_p", "explorer", "look again", "")
			s.Tasks().CompleteCall(context.Background(), "c2", core.TaskOutcome{TaskID: "ses_c2"}) // ses_c1's entry is forgotten
			list := s.PromptCache().List()
			require.Len(t, list, 1)
			assert.Equal(t, "ses_p", list[0].Parent)
			assert.Equal(t, "explorer", list[0].Agent)
		})
	}
}

// A session whose prompt was seen but whose usage has not come is not
// listed, in memory or beside a database.
func TestCacheListsSessionsWithUsage(t *testing.T) {
	for _, withDB := range []bool{false, true} {
		t.Run(fmt.Sprintf("database=%v", withDB), func(t *testing.T) {
			s := sessions.New(sessions.Config{})
			if withDB {
				openTestDB(t, filepath.Join(t.TempDir(), "state.db"), s)
			}
			s.PromptCache().Prompt("ses_waiting", &core.PromptPrint{})
			assert.Empty(t, s.PromptCache().List())
			s.PromptCache().Usage(context.Background(), sessions.Usage{Session: "ses_waiting", Message: "a1", Input: 3})
			require.Len(t, s.PromptCache().List(), 1)
			assert.Equal(t, int64(3), s.PromptCache().List()[0].InputTokens)
		})
	}
}
