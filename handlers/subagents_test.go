package handlers

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hookwire/hookwire/contract"
	"github.com/hookwire/hookwire/rpc"
	"github.com/hookwire/hookwire/subagents"
)

// fakeSubagents records the intents the server asks for.
type fakeSubagents struct {
	mu    sync.Mutex
	calls []string
}

func (f *fakeSubagents) note(format string, args ...any) (subagents.Changed, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, fmt.Sprintf(format, args...))
	return subagents.Changed{Parents: []string{"ses_P"}}, nil
}

func (f *fakeSubagents) SubagentStarted(_ context.Context, s subagents.Started) (subagents.Changed, error) {
	return f.note("started %s of %s %q %q %s", s.Session, s.Parent, s.Label, s.Agent, s.At.Format(time.RFC3339))
}
func (f *fakeSubagents) SubagentStatus(_ context.Context, session string, ev subagents.Event, r *subagents.Retry, _ time.Time) (subagents.Changed, error) {
	if r != nil {
		return f.note("status %s %d attempt %d %q %s", session, ev, r.Attempt, r.Message, r.Next.Format(time.RFC3339))
	}
	return f.note("status %s %d", session, ev)
}
func (f *fakeSubagents) SubagentMessage(_ context.Context, m subagents.Message) (subagents.Changed, error) {
	return f.note("message %s %s %s %+v %g done=%v err=%s", m.Session, m.ID, m.Model, m.Tokens, m.Cost, m.Done, m.ErrName)
}
func (f *fakeSubagents) SubagentEnded(_ context.Context, session string, ev subagents.Event, reason string, _ time.Time) (subagents.Changed, error) {
	return f.note("ended %s %d %q", session, ev, reason)
}
func (f *fakeSubagents) SubagentTask(_ context.Context, t subagents.Task) (subagents.Changed, error) {
	return f.note("task %s alias %q", t.Session, t.Alias)
}
func (f *fakeSubagents) Forget(_ context.Context, session string) (subagents.Changed, error) {
	return f.note("forget %s", session)
}
func (f *fakeSubagents) SubagentsOf(context.Context, string, string, int) (subagents.Page, error) {
	return subagents.Page{Subagents: []subagents.Row{}}, nil
}
func (f *fakeSubagents) ParentFigures(context.Context, string) (subagents.Parent, error) {
	return subagents.Parent{}, nil
}

// Each of OpenCode's events becomes its intent, read leniently; events of
// other kinds, and bad members, ask for nothing.
func TestSubagentEvents(t *testing.T) {
	fake := &fakeSubagents{}
	s := New(Options{Version: "test", Log: zerolog.Nop(), Subagents: func() subagents.Service { return fake }})
	_, err := s.Dispatch(context.Background(), rpc.Request{Method: "initialize", Params: mustJSON(t, map[string]any{"protocolVersion": 1})})
	require.NoError(t, err)
	event := func(ev map[string]any) {
		t.Helper()
		_, err := s.Dispatch(context.Background(), rpc.Request{Method: "event", Params: mustJSON(t, map[string]any{"input": map[string]any{"event": ev}})})
		require.NoError(t, err)
	}
	props := func(typ string, p map[string]any) map[string]any { return map[string]any{"type": typ, "properties": p} }
	event(props("session.created", map[string]any{"sessionID": "ses_P", "info": map[string]any{"id": "ses_P", "title": "New session"}}))
	event(props("session.created", map[string]any{"sessionID": "ses_C", "info": map[string]any{"id": "ses_C", "parentID": "ses_P",
		"title": "Explore the repo (@explorer subagent)", "time": map[string]any{"created": 1795993563894}}}))
	event(props("session.status", map[string]any{"sessionID": "ses_C", "status": map[string]any{"type": "busy"}}))
	event(props("session.status", map[string]any{"sessionID": "ses_C", "status": map[string]any{"type": "retry", "attempt": 2, "message": "Rate limit reached", "next": 1795993567000}}))
	event(props("session.status", map[string]any{"sessionID": "ses_C", "status": "weird"}))
	event(props("message.updated", map[string]any{"sessionID": "ses_C", "info": map[string]any{"id": "msg_1", "sessionID": "ses_C", "role": "assistant",
		"providerID": "fake", "modelID": "m2", "cost": 0.25, "tokens": map[string]any{"input": 10, "output": 2, "reasoning": 1, "cache": map[string]any{"read": 5, "write": 1}},
		"time": map[string]any{"completed": 1}}}))
	event(props("message.updated", map[string]any{"sessionID": "ses_C", "info": map[string]any{"id": "msg_0", "sessionID": "ses_C", "role": "user"}}))
	event(props("message.updated", map[string]any{"sessionID": "ses_C", "info": map[string]any{"id": "msg_2", "sessionID": "ses_C", "role": "assistant",
		"tokens": "bad", "error": map[string]any{"name": "APIError", "data": map[string]any{"statusCode": 429}}}}))
	event(props("session.error", map[string]any{"sessionID": "ses_C", "error": map[string]any{"name": "APIError", "data": map[string]any{"message": "Rate limit reached for m3"}}}))
	event(props("session.error", map[string]any{"sessionID": "ses_C", "error": map[string]any{"name": "MessageAbortedError", "data": map[string]any{"message": "aborted"}}}))
	event(props("session.error", map[string]any{"sessionID": "ses_C"}))
	event(props("session.idle", map[string]any{"sessionID": "ses_C"}))
	event(props("message.part.updated", map[string]any{"sessionID": "ses_C"}))
	event(props("session.deleted", map[string]any{"sessionID": "ses_C", "info": map[string]any{"id": "ses_C"}}))

	assert.Equal(t, []string{
		`started ses_C of ses_P "Explore the repo" "explorer" 2026-11-29T23:06:03Z`,
		`status ses_C 0`,
		`status ses_C 1 attempt 2 "Rate limit reached" 2026-11-29T23:06:07Z`,
		`message ses_C msg_1 fake/m2 {Input:10 Output:2 Reasoning:1 CacheRead:5 CacheWrite:1} 0.25 done=true err=`,
		`message ses_C msg_2  {Input:0 Output:0 Reasoning:0 CacheRead:0 CacheWrite:0} 0 done=true err=APIError`,
		`ended ses_C 3 "rate limit"`,
		`ended ses_C 3 "rate limit: Rate limit reached for m3"`,
		`ended ses_C 4 ""`,
		`ended ses_C 2 ""`,
		`forget ses_C`,
	}, fake.calls)

	// The parents changed are named once, after the burst.
	select {
	case n := <-s.Notifications():
		assert.Equal(t, contract.MethodSubagentsChanged, n.Method)
		assert.Equal(t, subagents.Changed{Parents: []string{"ses_P"}}, n.Params)
	case <-time.After(2 * time.Second):
		t.Fatal("no subagents.changed")
	}
	select {
	case n := <-s.Notifications():
		t.Fatalf("a second notification for one burst: %v", n)
	case <-time.After(3 * changedEvery):
	}
}

func TestSubagentsListParams(t *testing.T) {
	s := newServer(t, nil)
	for _, tt := range []struct{ params, want string }{
		{`{}`, `missing field "sessionID"`},
		{`{"sessionID":""}`, `missing field "sessionID"`},
		{`{"sessionID":"s","limit":-1}`, "limit"},
		{`{"sessionID":"s","cursor":"nope!"}`, "cursor"},
	} {
		_, err := s.Dispatch(context.Background(), rpc.Request{Method: "subagents.list", Params: []byte(tt.params)})
		var e *rpc.Error
		require.ErrorAs(t, err, &e, tt.params)
		assert.Equal(t, rpc.CodeInvalidParams, e.Code)
		assert.Contains(t, e.Message, tt.want)
	}
}
