package sessions

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hookwire/hookwire/core"
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
	usage    *Usage
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

func use(msg string, cacheRead int64) *Usage {
	return &Usage{Session: "ses_p", Message: msg, Model: "fake/m", Input: 10, Output: 5, CacheRead: cacheRead}
}

func playCache(t *testing.T, s *Store, steps []cacheStep) {
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

func TestCacheBusts(t *testing.T) {
	hookwireBlock := core.Bust{Cause: core.CauseSystem, ByHookwire: true, Detail: "system prompt changed by hookwire (its Resumable Sessions block)"}
	otherSystem := core.Bust{Cause: core.CauseSystem, Detail: "system prompt changed by another plugin or OpenCode"}
	reminderMoved := core.Bust{Cause: core.CauseMessage, ByHookwire: true, Detail: "message 0 changed by hookwire (its added parts)"}
	tests := []struct {
		name      string
		steps     []cacheStep
		requests  int64
		cacheRead int64
		busts     []CacheBust
		inARow    int
	}{
		{
			name: "a prefix that only grows: no bust",
			steps: []cacheStep{
				{prompt: []string{"u1"}, sys: 1}, {usage: use("a1", 0)},
				{prompt: []string{"u1", "a1"}, sys: 1}, {usage: use("a2", 100)},
				{prompt: []string{"u1", "a1", "a2"}, sys: 1}, {usage: use("a3", 150)},
			},
			requests: 3, cacheRead: 250,
		},
		{
			name: "hookwire's block changes twice in a row: two busts, the second in a row",
			steps: []cacheStep{
				{prompt: []string{"u1"}, sys: 1, block: 5}, {usage: use("a1", 0)},
				{prompt: []string{"u1", "a1"}, sys: 1, block: 5}, {usage: use("a2", 200)},
				{prompt: []string{"u1", "a1", "a2"}, sys: 1, block: 6}, {usage: use("a3", 50), bust: &hookwireBlock},
				{prompt: []string{"u1", "a1", "a2", "a3"}, sys: 1, block: 7}, {usage: use("a4", 40), bust: &hookwireBlock, inARow: true},
			},
			requests: 4, cacheRead: 290, inARow: 2,
			busts: []CacheBust{{Message: "a3", TokensLost: 150, Bust: hookwireBlock}, {Message: "a4", TokensLost: 10, Bust: hookwireBlock}},
		},
		{
			name: "another plugin's system text, then a held request: the run of busts ends",
			steps: []cacheStep{
				{prompt: []string{"u1"}, sys: 1}, {usage: use("a1", 100)},
				{prompt: []string{"u1", "a1"}, sys: 2}, {usage: use("a2", 30), bust: &otherSystem},
				{prompt: []string{"u1", "a1", "a2"}, sys: 2}, {usage: use("a3", 300)},
			},
			requests: 3, cacheRead: 430,
			busts: []CacheBust{{Message: "a2", TokensLost: 70, Bust: otherSystem}},
		},
		{
			name: "the reminder leaves the older user message at a new turn",
			steps: []cacheStep{
				{prompt: []string{"u1"}, opsOf: map[string]uint64{"u1": 9}, sys: 1}, {usage: use("a1", 100)},
				{prompt: []string{"u1", "a1", "u2"}, opsOf: map[string]uint64{"u2": 9}, sys: 1}, {usage: use("a2", 20), bust: &reminderMoved},
			},
			requests: 2, cacheRead: 120, inARow: 1,
			busts: []CacheBust{{Message: "a2", TokensLost: 80, Bust: reminderMoved}},
		},
		{
			name: "a usage after the next request's prompt is paired with its own prompt",
			steps: []cacheStep{
				{prompt: []string{"u1"}, sys: 1, block: 5}, {usage: use("a1", 100)},
				{prompt: []string{"u1", "a1"}, sys: 1, block: 6},       // a2's prompt: the block changed
				{prompt: []string{"u1", "a1", "a2"}, sys: 1, block: 6}, // a3's, before a2's usage came
				{usage: use("a2", 10), bust: &hookwireBlock},
				{usage: use("a3", 200)},
			},
			requests: 3, cacheRead: 310,
			busts: []CacheBust{{Message: "a2", TokensLost: 90, Bust: hookwireBlock}},
		},
		{
			name: "a system transform without a messages transform (the title request) does not count",
			steps: []cacheStep{
				{prompt: []string{"u1"}, sys: 1}, {usage: use("a1", 100)},
				{prompt: []string{"u1", "a1"}, sys: 1},
				{prompt: nil, sys: 99, noSystem: true}, // nothing pending gets it twice
				{usage: use("a2", 300)},
			},
			requests: 2, cacheRead: 400,
		},
		{
			name: "a usage with no prompt seen: unknown",
			steps: []cacheStep{
				{prompt: []string{"u1"}, sys: 1}, {usage: use("a1", 100)},
				{usage: use("a2", 10), bust: &core.Bust{Cause: core.CauseUnknown, Detail: "hookwire did not see both prompts"}},
			},
			requests: 2, cacheRead: 110, inARow: 1,
			busts: []CacheBust{{Message: "a2", TokensLost: 90, Bust: core.Bust{Cause: core.CauseUnknown, Detail: "hookwire did not see both prompts"}}},
		},
		{
			name: "the same message reported again: counted once; with new figures: counted again, not twice",
			steps: []cacheStep{
				{prompt: []string{"u1"}, sys: 1}, {usage: use("a1", 100)},
				{prompt: []string{"u1", "a1"}, sys: 1, block: 3}, {usage: use("a2", 10), bust: &hookwireBlock},
				{usage: use("a2", 10)},  // again, same figures: nothing
				{usage: use("a2", 150)}, // updated: no longer a bust
			},
			requests: 2, cacheRead: 250,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := New(Config{})
			playCache(t, s, tt.steps)
			list := s.PromptCache().List()
			require.Len(t, list, 1)
			c := list[0]
			assert.Equal(t, tt.requests, c.Requests)
			assert.Equal(t, tt.cacheRead, c.CacheReadTokens)
			assert.Equal(t, 10*tt.requests, c.InputTokens)
			if tt.busts == nil {
				tt.busts = []CacheBust{}
			}
			assert.Equal(t, tt.busts, c.Busts)
			assert.Equal(t, int64(len(tt.busts)), c.BustCount)
			lost := int64(0)
			for _, b := range tt.busts {
				lost += b.TokensLost
			}
			assert.Equal(t, lost, c.TokensLost)
			assert.Equal(t, tt.inARow, c.BustsInARow)
		})
	}
}

func TestCacheModelChange(t *testing.T) {
	s := New(Config{})
	s.PromptCache().Prompt("ses_p", &core.PromptPrint{})
	s.PromptCache().Usage(context.Background(), Usage{Session: "ses_p", Message: "a1", Model: "p/a", CacheRead: 100})
	s.PromptCache().Prompt("ses_p", &core.PromptPrint{Messages: []core.MessagePrint{{ID: core.HashID("a1")}}})
	bust, _ := s.PromptCache().Usage(context.Background(), Usage{Session: "ses_p", Message: "a2", Model: "p/b", CacheRead: 0, Input: 5})
	require.NotNil(t, bust)
	assert.Equal(t, core.Bust{Cause: core.CauseModel, Detail: "model changed from p/a to p/b"}, bust.Bust)
}

// The figures go into the state file and come back: the next process
// compares its first request with the last one of the previous process.
func TestCacheSnapshotRoundTrip(t *testing.T) {
	s := New(Config{})
	s.Tracked().SetAgent(context.Background(), "ses_p", "orchestrator")
	playCache(t, s, []cacheStep{
		{prompt: []string{"u1"}, sys: 1, block: 5}, {usage: use("a1", 100)},
		{prompt: []string{"u1", "a1"}, sys: 1, block: 6},
		{usage: use("a2", 10), bust: &core.Bust{Cause: core.CauseSystem, ByHookwire: true, Detail: "system prompt changed by hookwire (its Resumable Sessions block)"}},
	})
	data, err := s.Snapshot()
	require.NoError(t, err)

	r := New(Config{})
	require.NoError(t, r.Restore(data))
	assert.Equal(t, s.PromptCache().List(), r.PromptCache().List())
	assert.Equal(t, "orchestrator", r.PromptCache().List()[0].Agent)

	// The restored last request is not counted again when reported again,
	// and the next request is compared with it.
	_, _ = r.PromptCache().Usage(context.Background(), *use("a2", 10))
	r.PromptCache().Prompt("ses_p", promptOf(cacheStep{prompt: []string{"u1", "a1", "a2"}}))
	r.PromptCache().System("ses_p", 1, 7)
	bust, inARow := r.PromptCache().Usage(context.Background(), *use("a3", 5))
	require.NotNil(t, bust)
	assert.True(t, bust.ByHookwire)
	assert.True(t, inARow)
	c := r.PromptCache().List()[0]
	assert.Equal(t, int64(3), c.Requests)
	assert.Equal(t, int64(115), c.CacheReadTokens)
	assert.Equal(t, int64(2), c.BustCount)

	again, err := r.Snapshot()
	require.NoError(t, err)
	assert.Contains(t, string(again), `"cache":[{"session":"ses_p"`)
}

func TestCacheBoundsAndForget(t *testing.T) {
	s := New(Config{})
	for i := range MaxCacheSessions + 10 {
		s.PromptCache().Usage(context.Background(), Usage{Session: fmt.Sprintf("ses_%d", i), Message: "a1", CacheRead: 1})
	}
	list := s.PromptCache().List()
	assert.Len(t, list, MaxCacheSessions)
	assert.Equal(t, fmt.Sprintf("ses_%d", MaxCacheSessions+9), list[0].Session, "the most recently used first")

	// A session's busts are bounded; the count is not.
	for i := range MaxBustsPerSession + 5 {
		s.PromptCache().Usage(context.Background(), Usage{Session: "ses_x", Message: fmt.Sprintf("a%d", 2*i), CacheRead: 100})
		s.PromptCache().Usage(context.Background(), Usage{Session: "ses_x", Message: fmt.Sprintf("a%d", 2*i+1), CacheRead: 50})
	}
	x := s.PromptCache().List()[0]
	assert.Equal(t, "ses_x", x.Session)
	assert.Len(t, x.Busts, MaxBustsPerSession)
	assert.Equal(t, int64(MaxBustsPerSession+5), x.BustCount)
	assert.Equal(t, fmt.Sprintf("a%d", 2*(MaxBustsPerSession+4)+1), x.Busts[MaxBustsPerSession-1].Message)

	before := changeCount(s)
	s.DeleteSession(context.Background(), "ses_x")
	assert.Greater(t, changeCount(s), before)
	for _, c := range s.PromptCache().List() {
		assert.NotEqual(t, "ses_x", c.Session)
	}

	// Ids over the cap and empty ones are not kept.
	b, _ := s.PromptCache().Usage(context.Background(), Usage{Session: "", Message: "a"})
	assert.Nil(t, b)
	s.PromptCache().Prompt(string(make([]byte, MaxIDBytes+1)), &core.PromptPrint{})
	assert.Len(t, s.PromptCache().List(), MaxCacheSessions-1)
}

func TestPrintEncoding(t *testing.T) {
	tests := []struct {
		name string
		p    *core.PromptPrint
	}{
		{"nil", nil},
		{"no system seen, no messages", &core.PromptPrint{}},
		{"system and messages", &core.PromptPrint{SystemSeen: true, System: 1<<64 - 1, Block: 0, Messages: []core.MessagePrint{{ID: 1, Content: 2, Ops: 3}, {ID: 1 << 63}}}},
		{"truncated", &core.PromptPrint{Truncated: true, Messages: []core.MessagePrint{{ID: 4}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := decodePrint(encodePrint(tt.p))
			require.NoError(t, err)
			assert.Equal(t, tt.p, got)
		})
	}
	for _, bad := range []string{"x", "s1m", "sZZ.0m", "s1.0mAQ", "-m!!!!"} {
		_, err := decodePrint(bad)
		assert.Error(t, err, bad)
	}
}

// A task session's parent and agent are kept with its figures when its
// entry is forgotten (maxSessionsPerAgent), and go into the state file.
func TestCacheKeepsParentOfForgottenTask(t *testing.T) {
	s := New(Config{MaxSessionsPerAgent: 1})
	task := func(callID, child string) {
		s.Tasks().BeginCall(context.Background(), callID, "ses_p", "explorer", "look", "")
		s.Tasks().CompleteCall(context.Background(), callID, core.TaskOutcome{TaskID: child})
	}
	task("c1", "ses_c1")
	s.PromptCache().Usage(context.Background(), Usage{Session: "ses_c1", Message: "a1", CacheRead: 5})
	s.PromptCache().Usage(context.Background(), Usage{Session: "ses_top", Message: "a1", CacheRead: 5})
	task("c2", "ses_c2") // ses_c1's entry is forgotten
	assert.Len(t, s.Tasks().List("ses_p"), 1)

	data, err := s.Snapshot()
	require.NoError(t, err)
	r := New(Config{})
	require.NoError(t, r.Restore(data))
	for _, st := range []*Store{s, r} {
		got := map[string][2]string{}
		for _, c := range st.PromptCache().List() {
			got[c.Session] = [2]string{c.Parent, c.Agent}
		}
		assert.Equal(t, map[string][2]string{"ses_c1": {"ses_p", "explorer"}, "ses_top": {"", ""}}, got)
	}
}
