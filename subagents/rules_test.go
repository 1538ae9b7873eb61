package subagents

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestNext(t *testing.T) {
	tests := []struct {
		name string
		cur  State
		ev   Event
		want State
	}{
		{"busy runs", Running, Busy, Running},
		{"a retry waits", Running, RetryScheduled, Retrying},
		{"busy after a retry runs again", Retrying, Busy, Running},
		{"idle ends a running child", Running, Idle, Done},
		{"idle ends a retrying child", Retrying, Idle, Done},
		{"idle keeps a failure", Failed, Idle, Failed},
		{"idle keeps a cancel", Cancelled, Idle, Cancelled},
		{"idle of an interrupted child: done", Interrupted, Idle, Done},
		{"an error fails", Running, Errored, Failed},
		{"an error after a cancel keeps the cancel", Cancelled, Errored, Cancelled},
		{"an abort cancels", Retrying, Aborted, Cancelled},
		{"an abort after a failure cancels", Failed, Aborted, Cancelled},
		{"a resume runs a done child again", Done, Busy, Running},
		{"a resume runs a cancelled child again", Cancelled, Busy, Running},
		{"an unknown event changes nothing", Done, Event(99), Done},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { assert.Equal(t, tt.want, Next(tt.cur, tt.ev)) })
	}
}

func TestShown(t *testing.T) {
	for _, s := range []State{Running, Retrying} {
		assert.Equal(t, s, Shown(s, true))
		assert.Equal(t, Interrupted, Shown(s, false), "an active row of a gone writer is interrupted")
	}
	for _, s := range []State{Done, Failed, Cancelled} {
		assert.Equal(t, s, Shown(s, false), "an ended row is what it is")
	}
}

func TestParseTitle(t *testing.T) {
	tests := []struct {
		title, label, agent string
		ok                  bool
	}{
		{"Explore the repo (@explorer subagent)", "Explore the repo", "explorer", true},
		{"Fix (a) bug (@general subagent)", "Fix (a) bug", "general", true},
		{"  Slow audit (@code-reviewer subagent)  ", "Slow audit", "code-reviewer", true},
		{"New session - 2026-11-29T23:06:01.383Z", "", "", false},
		{"x (@ subagent)", "", "", false},
		{"x (@two words subagent)", "", "", false},
		{"", "", "", false},
	}
	for _, tt := range tests {
		label, agent, ok := ParseTitle(tt.title)
		assert.Equal(t, tt.ok, ok, tt.title)
		assert.Equal(t, tt.label, label, tt.title)
		assert.Equal(t, tt.agent, agent, tt.title)
	}
}

func TestReason(t *testing.T) {
	tests := []struct {
		name, errName, message string
		status                 int
		want                   string
	}{
		{"429", "APIError", "Rate limit reached for fake-model-3", 429, "rate limit: Rate limit reached for fake-model-3"},
		{"overloaded by words", "APIError", "Overloaded", 0, "overloaded: Overloaded"},
		{"5xx", "APIError", "", 502, "server error"},
		{"unknown kind: the message", "UnknownError", "something odd", 0, "something odd"},
		{"nothing but a name", "ProviderAuthError", "", 0, "ProviderAuthError"},
		{"nothing at all", "", "", 0, "failed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { assert.Equal(t, tt.want, Reason(tt.errName, tt.message, tt.status)) })
	}
	long := Reason("", strings.Repeat("é", 300), 0)
	assert.LessOrEqual(t, len(long), MaxTextBytes)
	assert.Equal(t, 0, len(long)%2, "cut on a rune boundary")
}

func TestFigures(t *testing.T) {
	a := Tokens{Input: 100, Output: 10, Reasoning: 1, CacheRead: 300, CacheWrite: 100}
	assert.Equal(t, int64(510), a.Context())
	share, ok := a.CacheShare()
	require.True(t, ok)
	assert.InDelta(t, 0.6, share, 1e-9)
	_, ok = Tokens{Output: 5}.CacheShare()
	assert.False(t, ok, "no prompt, no share")
	f := Figures{Tokens: a, Cost: 0.5}
	assert.Equal(t, f, f.Add(f).Sub(f))
}

func TestCursor(t *testing.T) {
	c := Cursor{Active: true, StartedNs: 1795993563894000000, Session: "ses_a:b"}
	got, err := DecodeCursor(c.Encode())
	require.NoError(t, err)
	assert.Equal(t, c, got)
	for _, bad := range []string{"", "!!", "MTox", Cursor{Session: "x"}.Encode()[:4]} {
		_, err := DecodeCursor(bad)
		assert.ErrorIs(t, err, ErrBadCursor, bad)
	}
	assert.True(t, Cursor{Active: true, StartedNs: 1}.Before(Cursor{StartedNs: 9}), "active first")
	assert.True(t, Cursor{StartedNs: 9}.Before(Cursor{StartedNs: 1}), "newest first")
	assert.True(t, Cursor{StartedNs: 1, Session: "b"}.Before(Cursor{StartedNs: 1, Session: "a"}))
}

// One 429 recorded as two switches (issue 51: the failure's, then
// chat.message's while the model cools down) lists as one, with its
// class; a later failure to another model is a second.
func TestSwitchesOnePerFailure(t *testing.T) {
	at := time.Date(2026, 12, 6, 1, 29, 0, 0, time.UTC)
	list := []SwitchRecord{
		{From: "fake/fake-model-3", To: "fake/fake-model-2", Reason: "rate-limit: Rate limit reached for fake-model-3", At: at},
		{From: "fake/fake-model-3", To: "fake/fake-model-2", Reason: "cooling until 2026-12-06T01:29:14Z (rate-limit: Rate limit reached for fake-model-3)", At: at.Add(700 * time.Millisecond)},
		{From: "fake/fake-model-2", To: "fake/fake-model-1", Reason: "overloaded: Overloaded", At: at.Add(time.Minute)},
		{From: "fake/fake-model-1", To: "fake/fake-model-0", Reason: "cooling until 2026-12-06T01:35:00Z (server-error: Bad gateway)", At: at.Add(2 * time.Minute)},
		{From: "a/b", To: "c/d", Reason: "something else entirely", At: at.Add(3 * time.Minute)},
	}
	got := Switches(list)
	require.Len(t, got, 4)
	assert.Equal(t, Switch{From: "fake/fake-model-3", To: "fake/fake-model-2", Class: "rate-limit", At: at}, got[0])
	assert.Equal(t, "overloaded", got[1].Class)
	assert.Equal(t, "server-error", got[2].Class, "a cooling switch of its own pair is kept, with the class it names")
	assert.Equal(t, "unknown", got[3].Class)
	for _, sw := range got {
		assert.NotContains(t, sw.Class, "cooling")
	}
}
