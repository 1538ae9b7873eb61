package handlers

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hookwire/hookwire/core"
	"github.com/hookwire/hookwire/rpc"
	"github.com/hookwire/hookwire/sessions"
)

type fakeObserved struct{ entries []sessions.Entry }

func (f *fakeObserved) Entries() []sessions.Entry { return f.entries }
func (f *fakeObserved) Count() int                { return len(f.entries) }

// Page pages the fake's entries: a limit cuts them with the cursor
// "more", which gives the rest.
func (f *fakeObserved) Page(_ context.Context, parent, cursor string, limit int) (sessions.EntryPage, error) {
	if cursor != "" && cursor != "more" {
		return sessions.EntryPage{}, sessions.ErrBadCursor
	}
	out := sessions.EntryPage{Entries: []sessions.Entry{}}
	for _, e := range f.entries {
		if parent == "" || e.Parent == parent {
			out.Entries = append(out.Entries, e)
		}
	}
	switch {
	case cursor == "more":
		out.Entries = out.Entries[min(limit, len(out.Entries)):]
	case limit > 0 && len(out.Entries) > limit:
		out.Entries, out.Next = out.Entries[:limit], "more"
	}
	return out, nil
}
func (f *fakeObserved) Status() ObservedFileStatus {
	return ObservedFileStatus{File: "/state/p.json", LastLoad: "corrupt: bad", Watch: "poll", Loads: 3, Parents: 2}
}

func observed() *fakeObserved {
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	return &fakeObserved{entries: []sessions.Entry{
		{Parent: "ses_a", Agent: "explorer", Alias: "exp-2", TaskID: "ses_c2", Label: "two", LastUse: t0.Add(time.Second), Run: sessions.Run{State: sessions.RunRunning}},
		{Parent: "ses_b", Agent: "oracle", Alias: "ora-1", TaskID: "ses_c3", Label: "three", LastUse: t0, Run: sessions.Run{State: sessions.RunError, Error: "boom"}},
	}}
}

// observe sends one request and returns its result as JSON, or its error.
func observe(t *testing.T, o *Observer, method string, params any) (string, *rpc.Error) {
	t.Helper()
	var raw json.RawMessage
	if params != nil {
		raw = mustJSON(t, params)
	}
	res, err := o.Dispatch(context.Background(), rpc.Request{Method: method, Params: raw})
	if err != nil {
		var e *rpc.Error
		require.ErrorAs(t, err, &e)
		return "", e
	}
	return string(mustJSON(t, res)), nil
}

func TestObserverInitialize(t *testing.T) {
	o := NewObserver(Options{Version: "v9", Log: zerolog.Nop()}, observed())
	got, err := observe(t, o, "initialize", map[string]any{"protocolVersion": 1, "config": map[string]any{"cachestable": true}})
	require.Nil(t, err)
	assert.JSONEq(t, `{"protocolVersion":1,"serverInfo":{"name":"hookwire","version":"v9"},
		"capabilities":{"hooks":[],"events":[],
			"methods":["sessions.list","sessions.page","subagents.list","status","delegate.resolveModel","delegate.detectError"],
			"notifications":["sessions.changed","subagents.changed"]},
		"observer":true,
		"warnings":["config.cachestable: unknown member, ignored (did you mean \"cacheStable\"?)"]}`, got)
	_, err = observe(t, o, "initialize", map[string]any{"protocolVersion": 1})
	require.NotNil(t, err)
	assert.Equal(t, rpc.CodeInvalidRequest, err.Code, "a second initialize")
}

func TestObserverMethods(t *testing.T) {
	tests := []struct {
		name     string
		method   string
		params   any
		initted  bool
		wantCode int64  // 0: a result
		want     string // the result, JSON
	}{
		{"hook before initialize", "tool.execute.before", map[string]any{}, false, CodeReadOnlyObserver, ""},
		{"hook", "chat.messages.transform", map[string]any{}, true, CodeReadOnlyObserver, ""},
		{"event", "event", map[string]any{}, true, CodeReadOnlyObserver, ""},
		{"agents.update", "agents.update", map[string]any{}, true, CodeReadOnlyObserver, ""},
		{"list before initialize", "sessions.list", nil, false, rpc.CodeNotInitialized, ""},
		{"unknown method", "nope", nil, true, rpc.CodeMethodNotFound, ""},
		{"list all", "sessions.list", nil, true, 0, `[
			{"parent":"ses_a","agent":"explorer","alias":"exp-2","taskId":"ses_c2","label":"two","lastUse":"2026-01-02T03:04:06Z","run":{"state":"running"}},
			{"parent":"ses_b","agent":"oracle","alias":"ora-1","taskId":"ses_c3","label":"three","lastUse":"2026-01-02T03:04:05Z","run":{"state":"error","error":"boom"}}]`},
		{"list one parent", "sessions.list", map[string]any{"sessionID": "ses_b"}, true, 0, `[
			{"parent":"ses_b","agent":"oracle","alias":"ora-1","taskId":"ses_c3","label":"three","lastUse":"2026-01-02T03:04:05Z","run":{"state":"error","error":"boom"}}]`},
		{"list of an unknown parent", "sessions.list", map[string]any{"sessionID": "ses_x"}, true, 0, `[]`},
		{"bad list params", "sessions.list", []int{1}, true, rpc.CodeInvalidParams, ""},
		{"page before initialize", "sessions.page", nil, false, rpc.CodeNotInitialized, ""},
		{"page of all", "sessions.page", nil, true, 0, `{"entries":[
			{"parent":"ses_a","agent":"explorer","alias":"exp-2","taskId":"ses_c2","label":"two","lastUse":"2026-01-02T03:04:06Z","run":{"state":"running"}},
			{"parent":"ses_b","agent":"oracle","alias":"ora-1","taskId":"ses_c3","label":"three","lastUse":"2026-01-02T03:04:05Z","run":{"state":"error","error":"boom"}}]}`},
		{"a page of one, and the cursor of the next", "sessions.page", map[string]any{"limit": 1}, true, 0, `{"entries":[
			{"parent":"ses_a","agent":"explorer","alias":"exp-2","taskId":"ses_c2","label":"two","lastUse":"2026-01-02T03:04:06Z","run":{"state":"running"}}],"next":"more"}`},
		{"the next page", "sessions.page", map[string]any{"limit": 1, "cursor": "more"}, true, 0, `{"entries":[
			{"parent":"ses_b","agent":"oracle","alias":"ora-1","taskId":"ses_c3","label":"three","lastUse":"2026-01-02T03:04:05Z","run":{"state":"error","error":"boom"}}]}`},
		{"a page of one parent", "sessions.page", map[string]any{"sessionID": "ses_b"}, true, 0, `{"entries":[
			{"parent":"ses_b","agent":"oracle","alias":"ora-1","taskId":"ses_c3","label":"three","lastUse":"2026-01-02T03:04:05Z","run":{"state":"error","error":"boom"}}]}`},
		{"a cursor no page gave", "sessions.page", map[string]any{"cursor": "forged"}, true, rpc.CodeInvalidParams, ""},
		{"a negative limit", "sessions.page", map[string]any{"limit": -1}, true, rpc.CodeInvalidParams, ""},
		{"core method", "delegate.detectError", map[string]any{"output": "Unknown agent type: x", "failed": true}, true, 0, ""},
		{"shutdown", "shutdown", nil, true, 0, `null`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := NewObserver(Options{Version: "v9", Log: zerolog.Nop()}, observed())
			if tt.initted {
				_, err := observe(t, o, "initialize", map[string]any{"protocolVersion": 1})
				require.Nil(t, err)
			}
			got, err := observe(t, o, tt.method, tt.params)
			if tt.wantCode != 0 {
				require.NotNil(t, err, "result %s", got)
				assert.Equal(t, tt.wantCode, err.Code)
				if tt.wantCode == CodeReadOnlyObserver {
					assert.Equal(t, "this process is a read-only observer: hooks are served by `hookwire serve`", err.Message)
				}
				return
			}
			require.Nil(t, err)
			if tt.want != "" {
				assert.JSONEq(t, tt.want, got)
			} else {
				assert.Contains(t, got, `"errorType":"unknown_agent"`)
			}
		})
	}
}

func TestObserverStatus(t *testing.T) {
	o := NewObserver(Options{Version: "v9", Log: zerolog.Nop()}, observed())
	_, err := observe(t, o, "initialize", map[string]any{"protocolVersion": 1})
	require.Nil(t, err)
	observe(t, o, "tool.execute.after", map[string]any{})
	got, err := observe(t, o, "status", nil)
	require.Nil(t, err)
	var st map[string]any
	require.NoError(t, json.Unmarshal([]byte(got), &st))
	assert.Equal(t, map[string]any{"file": "/state/p.json", "lastLoad": "corrupt: bad", "watch": "poll", "loads": 3.0, "parents": 2.0}, st["observer"])
	assert.Equal(t, map[string]any{"mode": "observer", "path": "/state/p.json"}, st["stateFile"])
	assert.Equal(t, map[string]any{"parents": 2.0, "entries": 2.0}, st["store"])
	assert.Equal(t, map[string]any{"initialize": 1.0, "tool.execute.after": 1.0}, st["requests"], "a request is counted once answered")
	assert.Equal(t, 1.0, st["errors"])
	assert.Equal(t, "v9", st["version"])
}

func TestObserverSessionsChanged(t *testing.T) {
	o := NewObserver(Options{Log: zerolog.Nop()}, observed())
	o.SessionsChanged(1)
	assert.Empty(t, o.Notifications(), "nothing before initialize")
	_, err := observe(t, o, "initialize", map[string]any{"protocolVersion": 1})
	require.Nil(t, err)
	o.SessionsChanged(2)
	require.Len(t, o.Notifications(), 1)
	n := <-o.Notifications()
	assert.Equal(t, "sessions.changed", n.Method)
	assert.JSONEq(t, `{"count":2}`, string(mustJSON(t, n.Params)))
	for range 100 {
		o.SessionsChanged(3) // a client far behind never blocks the watcher
	}
	assert.Len(t, o.Notifications(), cap(o.notes))
}

type fakeObservedCache struct {
	*fakeObserved
	cache []sessions.CacheSession
}

func (f fakeObservedCache) Cache() []sessions.CacheSession { return f.cache }

// An observer's status.cache sums the file's prompt-cache figures up
// (PROTOCOL.md 4.8), per session for the editors' views.
func TestObserverStatusCache(t *testing.T) {
	bust := sessions.CacheBust{Message: "msg_9", TokensLost: 40, Bust: core.Bust{Cause: "system", ByHookwire: true, Detail: "d"}}
	file := fakeObservedCache{observed(), []sessions.CacheSession{
		{Session: "ses_a", Agent: "orchestrator", Requests: 4, InputTokens: 100, CacheReadTokens: 300, BustCount: 2, TokensLost: 60, BustsInARow: 2,
			Busts: []sessions.CacheBust{{Message: "msg_8", TokensLost: 20}, bust}},
		{Session: "ses_c2", Parent: "ses_a", Agent: "explorer", Requests: 1, InputTokens: 50, CacheWriteTokens: 50, Busts: []sessions.CacheBust{}},
	}}
	o := NewObserver(Options{Version: "v9", Log: zerolog.Nop()}, file)
	_, rerr := observe(t, o, "initialize", map[string]any{"protocolVersion": 1})
	require.Nil(t, rerr)
	got, rerr := observe(t, o, "status", nil)
	require.Nil(t, rerr)
	var st struct {
		Cache json.RawMessage `json:"cache"`
	}
	require.NoError(t, json.Unmarshal([]byte(got), &st))
	assert.JSONEq(t, `{"sessions":2,"requests":5,"inputTokens":150,"cacheReadTokens":300,"cacheWriteTokens":50,"busts":2,"tokensLost":60,"cacheShare":0.6,
		"perSession":[
		  {"session":"ses_a","agent":"orchestrator","requests":4,"cacheShare":0.75,"busts":2,"bustsInARow":2,
		   "lastBust":{"message":"msg_9","tokensLost":40,"cause":"system","byHookwire":true,"detail":"d"}},
		  {"session":"ses_c2","parent":"ses_a","agent":"explorer","requests":1,"cacheShare":0,"busts":0,"bustsInARow":0}]}`, string(st.Cache))

	// A file without figures: an empty summary, not null.
	plain := NewObserver(Options{Version: "v9", Log: zerolog.Nop()}, observed())
	_, rerr = observe(t, plain, "initialize", map[string]any{"protocolVersion": 1})
	require.Nil(t, rerr)
	got, rerr = observe(t, plain, "status", nil)
	require.Nil(t, rerr)
	assert.Contains(t, got, `"cache":{"sessions":0,"requests":0,"inputTokens":0,"cacheReadTokens":0,"cacheWriteTokens":0,"busts":0,"tokensLost":0,"cacheShare":0,"perSession":[]}`)
}
