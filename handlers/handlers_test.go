package handlers

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/rs/zerolog"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hookwire/hookwire/rpc"
	"github.com/hookwire/hookwire/sessions"
)

func newServer(t testing.TB, config map[string]any) *Server {
	t.Helper()
	s := New(Options{Version: "test", Log: zerolog.Nop()})
	params := map[string]any{"protocolVersion": 1}
	if config != nil {
		params["config"] = config
	}
	_, err := s.Dispatch(context.Background(), rpc.Request{Method: "initialize", Params: mustJSON(t, params)})
	require.NoError(t, err)
	return s
}

func mustJSON(t testing.TB, v any) json.RawMessage {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return b
}

// call dispatches a hook and returns its patch ops, round-tripped through
// JSON as a client sees them.
func call(t testing.TB, s *Server, method string, params any) []map[string]any {
	t.Helper()
	res, err := s.Dispatch(context.Background(), rpc.Request{Method: method, Params: mustJSON(t, params)})
	require.NoError(t, err)
	var out struct {
		Patch []map[string]any `json:"patch"`
	}
	require.NoError(t, json.Unmarshal(mustJSON(t, res), &out))
	return out.Patch
}

// A history of one orchestrator session that grows request by request,
// as OpenCode sends it: each message's JSON, encoded once when added (the
// long-session tests send hundreds of requests of hundreds of messages;
// re-encoding the whole history each time cost a minute under -race).
type history struct {
	session string
	msgs    []json.RawMessage
	n       int
}

func (h *history) add(msg map[string]any) {
	b, err := json.Marshal(msg)
	if err != nil {
		panic(err)
	}
	h.msgs = append(h.msgs, b)
}

func (h *history) user(text string) {
	h.n++
	h.add(map[string]any{
		"info":  map[string]any{"id": fmt.Sprintf("msg_u%03d", h.n), "role": "user", "agent": "orchestrator", "sessionID": h.session},
		"parts": []any{map[string]any{"type": "text", "text": text}},
	})
}

func (h *history) assistantTask(callID, output string) {
	h.n++
	h.add(map[string]any{
		"info": map[string]any{"id": fmt.Sprintf("msg_a%03d", h.n), "role": "assistant", "sessionID": h.session},
		"parts": []any{map[string]any{"type": "tool", "tool": "task", "callID": callID,
			"state": map[string]any{"status": "completed", "output": output}}},
	})
}

// request runs the transform on the history and applies the patch the way
// the shim does, returning the messages the LLM would get.
func (h *history) request(t *testing.T, s *Server) []json.RawMessage {
	t.Helper()
	var params bytes.Buffer
	params.WriteString(`{"input":{},"output":{"messages":[`)
	for i, m := range h.msgs {
		if i > 0 {
			params.WriteByte(',')
		}
		params.Write(m)
	}
	params.WriteString(`]}}`)
	res, err := s.Dispatch(context.Background(), rpc.Request{Method: "chat.messages.transform", Params: params.Bytes()})
	require.NoError(t, err)
	patch, ok := res.(PatchResult)
	require.True(t, ok, "result %T", res)
	out := append([]json.RawMessage(nil), h.msgs...)
	for _, op := range patch.Patch {
		// Each value as Op.MarshalJSON writes it (encoding the whole
		// patch and decoding it again cost as much again).
		value, err := json.Marshal(op.Value)
		if err != nil {
			t.Fatalf("encoding %s's value: %v", op.Path, err)
		}
		path := strings.Split(strings.TrimPrefix(op.Path, "/"), "/")
		i, err := strconv.Atoi(path[min(1, len(path)-1)])
		if op.Op != "add" || len(path) != 4 || path[0] != "messages" || path[2] != "parts" || path[3] != "-" ||
			err != nil || i < 0 || i >= len(out) {
			require.Failf(t, "transform only adds parts here", "op %s %s", op.Op, op.Path)
		}
		// Append the part to the message's parts, its last member (add
		// encoded a map: members sorted, info before parts).
		m := out[i]
		if !bytes.HasSuffix(m, []byte("]}")) {
			t.Fatalf("message %d does not end with its parts: %s", i, m)
		}
		var b bytes.Buffer
		b.Write(m[:len(m)-2])
		if m[len(m)-3] != '[' {
			b.WriteByte(',')
		}
		b.Write(value)
		b.WriteString("]}")
		out[i] = b.Bytes()
	}
	return out
}

// delegate runs one task call through before/after.
func delegate(t *testing.T, s *Server, session, callID, agent, childID, taskID string) {
	args := map[string]any{"description": "work " + callID, "prompt": "p", "subagent_type": agent}
	if taskID != "" {
		args["task_id"] = taskID
	}
	call(t, s, "tool.execute.before", map[string]any{"input": map[string]any{"tool": "task", "sessionID": session, "callID": callID},
		"output": map[string]any{"args": args}})
	call(t, s, "tool.execute.after", map[string]any{"input": map[string]any{"tool": "task", "sessionID": session, "callID": callID},
		"output": map[string]any{"output": `<task id="` + childID + `" state="completed">` + "\nok\n</task>"}})
}

// TestCacheStablePrefix plays a long orchestrator session and checks the
// promise of PROTOCOL.md 4.4: every request's messages, up to and
// including the previous request's newest user message, are byte-identical
// to the previous request's; and the system prompt is never touched.
func TestCacheStablePrefix(t *testing.T) {
	for _, stable := range []bool{true, false} {
		t.Run(fmt.Sprintf("cacheStable=%v", stable), func(t *testing.T) {
			s := newServer(t, map[string]any{"cacheStable": stable})
			h := &history{session: "ses_orc"}
			call(t, s, "chat.message", map[string]any{"input": map[string]any{"sessionID": h.session, "agent": "orchestrator"}})
			var prev []json.RawMessage
			prevLastUser := -1
			breaks, systemAdds := 0, 0
			for turn := 0; turn < 8; turn++ {
				h.user(fmt.Sprintf("turn %d", turn))
				lastUser := len(h.msgs) - 1
				for step := 0; step < 3; step++ {
					got := h.request(t, s)
					if prev != nil {
						for i := 0; i <= prevLastUser; i++ {
							if string(got[i]) != string(prev[i]) {
								breaks++
								break
							}
						}
					}
					if len(call(t, s, "chat.system.transform", map[string]any{"input": map[string]any{"sessionID": h.session},
						"output": map[string]any{"system": []string{"base"}}})) > 0 {
						systemAdds++
					}
					prev, prevLastUser = got, lastUser
					callID := fmt.Sprintf("c%d_%d", turn, step)
					child := fmt.Sprintf("ses_child_%d", (turn*3+step)%4)
					agent := []string{"explorer", "oracle"}[step%2]
					alias := ""
					if turn > 0 && step == 2 {
						alias = "exp-1"
					}
					delegate(t, s, h.session, callID, agent, child, alias)
					h.assistantTask(callID, child)
				}
			}
			if stable {
				assert.Zero(t, breaks, "cache-stable mode must never change an earlier message")
				assert.Zero(t, systemAdds, "cache-stable mode must leave the system prompt alone")
			} else {
				// The default mode moves the reminder to the newest user
				// message, so each new turn changes the previous one.
				assert.Positive(t, breaks)
				assert.Positive(t, systemAdds)
			}
		})
	}
}

func TestCacheStableBlocksFrozenPerMessage(t *testing.T) {
	s := newServer(t, map[string]any{"cacheStable": true})
	h := &history{session: "ses_f"}
	call(t, s, "chat.message", map[string]any{"input": map[string]any{"sessionID": h.session, "agent": "orchestrator"}})
	h.user("first")
	first := h.request(t, s)
	assert.NotContains(t, string(first[0]), "### Resumable Sessions", "nothing was remembered when msg 1 was first seen")

	delegate(t, s, h.session, "c1", "explorer", "ses_e1", "")
	h.assistantTask("c1", "ses_e1")
	h.user("second")
	second := h.request(t, s)
	assert.Equal(t, string(first[0]), string(second[0]), "message 1 keeps its bytes")
	assert.Contains(t, string(second[2]), "exp-1")

	delegate(t, s, h.session, "c2", "explorer", "ses_e2", "")
	third := h.request(t, s)
	assert.Equal(t, string(second[2]), string(third[2]), "message 2's block stays as it was first seen, without exp-2")
	assert.NotContains(t, string(third[2]), "exp-2")

	// Deleting the session drops its frozen blocks with everything else.
	_, err := s.Dispatch(context.Background(), rpc.Request{Method: "event", Params: mustJSON(t, map[string]any{"input": map[string]any{"event": map[string]any{
		"type": "session.deleted", "properties": map[string]any{"info": map[string]any{"id": h.session}}}}}), Notification: true})
	require.NoError(t, err)
	assert.Zero(t, s.Store().Stats().FrozenBlocks)
}

func TestCacheStableFrozenBlocksAreBounded(t *testing.T) {
	s := newServer(t, map[string]any{"cacheStable": true, "maxParents": 3})
	for p := 0; p < 10; p++ {
		h := &history{session: fmt.Sprintf("ses_p%d", p)}
		call(t, s, "chat.message", map[string]any{"input": map[string]any{"sessionID": h.session, "agent": "orchestrator"}})
		delegate(t, s, h.session, "c", "explorer", "ses_c"+strconv.Itoa(p), "")
		for i := 0; i < 5; i++ {
			h.user("u")
			h.request(t, s)
		}
	}
	st := s.Store().Stats()
	assert.LessOrEqual(t, st.Parents, 3)
	assert.LessOrEqual(t, st.FrozenBlocks, 3*5, "frozen blocks leave with their evicted parent")
}

func TestHooksBeforeInitialize(t *testing.T) {
	s := New(Options{Version: "test", Log: zerolog.Nop()})
	_, err := s.Dispatch(context.Background(), rpc.Request{Method: "status"})
	var rerr *rpc.Error
	require.ErrorAs(t, err, &rerr)
	assert.Equal(t, rpc.CodeNotInitialized, rerr.Code)
}

func TestStatusCountsAreBounded(t *testing.T) {
	s := newServer(t, nil)
	for i := 0; i < 100; i++ {
		s.Dispatch(context.Background(), rpc.Request{Method: fmt.Sprintf("made.up.%d", i)})
	}
	res, err := s.Dispatch(context.Background(), rpc.Request{Method: "status"})
	require.NoError(t, err)
	st := res.(statusResult)
	assert.Equal(t, uint64(100), st.Requests["(other)"])
	assert.LessOrEqual(t, len(st.Requests), len(routes)+1)
	assert.Equal(t, uint64(100), st.Errors)
}

// TestCacheStableBeyondFrozenBound: a session with more orchestrator user
// messages than a session keeps frozen blocks must still never change an
// earlier message (the first message's block used to be forgotten and
// rebuilt, breaking every request after the bound).
func TestCacheStableBeyondFrozenBound(t *testing.T) {
	s := newServer(t, map[string]any{"cacheStable": true})
	h := &history{session: "ses_long"}
	call(t, s, "chat.message", map[string]any{"input": map[string]any{"sessionID": h.session, "agent": "orchestrator"}})
	delegate(t, s, h.session, "c0", "explorer", "ses_e0", "")
	var prev []json.RawMessage
	for turn := 0; turn < sessions.MaxFrozenBlocksPerSession+20; turn++ {
		h.user(fmt.Sprintf("turn %d", turn))
		got := h.request(t, s)
		for i := range prev {
			require.Equal(t, string(prev[i]), string(got[i]), "turn %d changed message %d", turn, i)
		}
		prev = got
		if turn%50 == 0 {
			delegate(t, s, h.session, fmt.Sprintf("c%d", turn+1), "oracle", fmt.Sprintf("ses_o%d", turn), "")
		}
	}
	assert.Equal(t, sessions.MaxFrozenBlocksPerSession, s.Store().Stats().FrozenBlocks)
}

// TestCacheStableCompactionFreesRoom: once a session is full, a history
// that no longer carries its early messages (OpenCode compacted them)
// frees their frozen blocks, and a new message gets a block again.
func TestCacheStableCompactionFreesRoom(t *testing.T) {
	s := newServer(t, map[string]any{"cacheStable": true})
	h := &history{session: "ses_compact"}
	call(t, s, "chat.message", map[string]any{"input": map[string]any{"sessionID": h.session, "agent": "orchestrator"}})
	delegate(t, s, h.session, "c0", "explorer", "ses_e0", "")
	for turn := 0; turn < sessions.MaxFrozenBlocksPerSession; turn++ {
		h.user(fmt.Sprintf("turn %d", turn))
		h.request(t, s)
	}
	h.user("one too many")
	full := h.request(t, s)
	assert.NotContains(t, string(full[len(full)-1]), "### Resumable Sessions", "a full session freezes no more")

	h.msgs = h.msgs[len(h.msgs)-10:] // compaction: only the last ten remain
	h.user("after compaction")
	got := h.request(t, s)
	assert.Contains(t, string(got[len(got)-1]), "### Resumable Sessions", "room again after the compaction")
	assert.LessOrEqual(t, s.Store().Stats().FrozenBlocks, 11)
}

// fakePersistence is a state file that is always written.
type fakePersistence struct{}

func (f *fakePersistence) Close() error   { return nil }
func (f *fakePersistence) Status() string { return "persistent: /state/hookwire.json" }
func (f *fakePersistence) State() sessions.StateStatus {
	return sessions.StateStatus{Mode: sessions.StatePersistent, Path: "/state/hookwire.json"}
}

// TestRouteTable: the one route table gives initialize's capabilities and
// status's counters.
func TestRouteTable(t *testing.T) {
	persist := &fakePersistence{}
	s := New(Options{Version: "test", Log: zerolog.Nop(), OpenState: func(*sessions.Store) Persistence { return persist }})
	res, err := s.Dispatch(context.Background(), rpc.Request{Method: "initialize", Params: json.RawMessage(`{"protocolVersion":1}`)})
	require.NoError(t, err)
	caps := res.(initializeResult).Capabilities
	assert.Equal(t, []string{"tool.execute.before", "tool.execute.after", "chat.system.transform",
		"chat.messages.transform", "chat.message", "event"}, caps.Hooks)
	assert.Equal(t, []string{"delegate.resolveModel", "delegate.detectError", "sessions.list", "sessions.page", "subagents.list", "agents.update", "providers.update", "status", "model.failed"}, caps.Methods)

	// One successful call of every hook and method.
	calls := []struct{ method, params string }{
		{"tool.execute.before", `{"input":{"tool":"bash","sessionID":"s","callID":"c"},"output":{"args":{}}}`},
		{"tool.execute.after", `{"input":{"tool":"bash","sessionID":"s","callID":"c"},"output":{"output":"x"}}`},
		{"chat.system.transform", `{"input":{"sessionID":"s"},"output":{"system":[]}}`},
		{"chat.messages.transform", `{"input":{},"output":{"messages":[]}}`},
		{"chat.message", `{"input":{"sessionID":"s","agent":"orchestrator"},"output":{"message":{},"parts":[]}}`},
		{"event", `{"input":{"event":{"type":"session.updated","properties":{}}}}`},
		{"delegate.resolveModel", `{"input":{"availableModels":[]},"deps":{"connectedProviders":null}}`},
		{"delegate.detectError", `{"output":"fine"}`},
		{"sessions.list", `{}`},
		{"sessions.page", `{"limit":10}`},
		{"subagents.list", `{"sessionID":"s"}`},
		{"agents.update", `{"subagents":["explore"]}`},
		{"providers.update", `{"availableModels":["fake/fake-model"]}`},
		{"status", `null`},
		{"model.failed", `{"sessionID":"s","error":{"statusCode":429}}`},
	}
	require.Len(t, calls, len(caps.Hooks)+len(caps.Methods), "every announced method is called once")
	for _, c := range calls {
		_, err := s.Dispatch(context.Background(), rpc.Request{Method: c.method, Params: json.RawMessage(c.params)})
		require.NoError(t, err, c.method)
	}
	_, err = s.Dispatch(context.Background(), rpc.Request{Method: "chat.message", Params: json.RawMessage(`[]`)})
	require.Error(t, err)

	res, err = s.Dispatch(context.Background(), rpc.Request{Method: "status"})
	require.NoError(t, err)
	st := res.(statusResult)
	for _, name := range append(append([]string{}, caps.Hooks...), caps.Methods...) {
		want := uint64(1)
		switch name {
		case "chat.message":
			want = 2 // the failed call counts too
		case "status":
			want = 1 // this call is counted once it has answered
		}
		assert.Equal(t, want, st.Requests[name], name)
	}
	assert.Equal(t, uint64(1), st.Requests["initialize"])
	assert.Equal(t, uint64(1), st.Errors)
}

// TestStatusStateFile: status says where the state lives as fields a
// client reads (stateFile) beside the line for humans (state).
func TestStatusStateFile(t *testing.T) {
	statusJSON := func(s *Server) map[string]any {
		res, err := s.Dispatch(context.Background(), rpc.Request{Method: "status"})
		require.NoError(t, err)
		var out map[string]any
		require.NoError(t, json.Unmarshal(mustJSON(t, res), &out))
		return out
	}

	st := statusJSON(newServer(t, nil))
	assert.Equal(t, "memory", st["state"])
	assert.Equal(t, map[string]any{"mode": "none"}, st["stateFile"], "no state file: mode none, nothing else")

	s := New(Options{Version: "test", Log: zerolog.Nop(), OpenState: func(*sessions.Store) Persistence { return &fakePersistence{} }})
	_, err := s.Dispatch(context.Background(), rpc.Request{Method: "initialize", Params: json.RawMessage(`{"protocolVersion":1}`)})
	require.NoError(t, err)
	st = statusJSON(s)
	assert.Equal(t, "persistent: /state/hookwire.json", st["state"])
	assert.Equal(t, map[string]any{"mode": "persistent", "path": "/state/hookwire.json"}, st["stateFile"])
}

// TestToolExecuteBeforeWithoutCallID: PROTOCOL.md 4.2's task_id treatment
// does not need input.callID: an alias is resolved, a real id trimmed, an
// unknown alias removed. Only the pending call is not remembered.
func TestToolExecuteBeforeWithoutCallID(t *testing.T) {
	s := newServer(t, nil)
	call(t, s, "chat.message", map[string]any{"input": map[string]any{"sessionID": "ses_p", "agent": "orchestrator"},
		"output": map[string]any{"message": map[string]any{}, "parts": []any{}}})
	delegate(t, s, "ses_p", "call_1", "explorer", "ses_child1", "")
	pending := s.Store().Stats().PendingCalls

	rows := []struct {
		name   string
		input  map[string]any
		taskID any // nil: no task_id
		want   []map[string]any
	}{
		{"alias resolved", map[string]any{}, "exp-1",
			[]map[string]any{{"op": "replace", "path": "/args/task_id", "value": "ses_child1"}}},
		{"real id trimmed", map[string]any{}, " ses_x ",
			[]map[string]any{{"op": "replace", "path": "/args/task_id", "value": "ses_x"}}},
		{"unknown alias removed", map[string]any{}, "nope-7",
			[]map[string]any{{"op": "remove", "path": "/args/task_id"}}},
		{"empty callID is no callID", map[string]any{"callID": ""}, "exp-1",
			[]map[string]any{{"op": "replace", "path": "/args/task_id", "value": "ses_child1"}}},
		{"no task_id: nothing to do", map[string]any{}, nil, []map[string]any{}},
	}
	for _, row := range rows {
		t.Run(row.name, func(t *testing.T) {
			input := map[string]any{"tool": "task", "sessionID": "ses_p"}
			for k, v := range row.input {
				input[k] = v
			}
			args := map[string]any{"subagent_type": "explorer", "description": "again"}
			if row.taskID != nil {
				args["task_id"] = row.taskID
			}
			got := call(t, s, "tool.execute.before", map[string]any{"input": input, "output": map[string]any{"args": args}})
			assert.Equal(t, row.want, got)
			assert.Equal(t, pending, s.Store().Stats().PendingCalls, "no pending call is remembered without a callID")
		})
	}
}

// TestPhaseReminderOnlyOnTheLastUserMessage: PROTOCOL.md 4.3 takes the last
// user message; when that one is skipped no earlier user message gets the
// reminder in its place, though each of these earlier ones would.
func TestPhaseReminderOnlyOnTheLastUserMessage(t *testing.T) {
	user := func(id string, agent any, parts ...any) map[string]any {
		info := map[string]any{"id": id, "role": "user", "sessionID": "ses_1"}
		if agent != nil {
			info["agent"] = agent
		}
		return map[string]any{"info": info, "parts": parts}
	}
	text := func(s string) map[string]any { return map[string]any{"type": "text", "text": s} }
	reply := map[string]any{"info": map[string]any{"id": "a1", "role": "assistant", "sessionID": "ses_1"}, "parts": []any{text("done")}}
	wanted := user("u1", "orchestrator", text("do the thing"))
	reminder := newServer(t, nil).cfg.ReminderConfig().ReminderText()

	tests := []struct {
		name     string
		messages []any
		want     []string // paths of the reminder ops
	}{
		{"the last user message wants it", []any{user("u0", "explorer", text("a")), reply, wanted}, []string{"/messages/2/parts/-"}},
		{"the last is another agent's", []any{wanted, reply, user("u2", "explorer", text("b"))}, nil},
		{"the last carries a skip marker", []any{wanted, reply, user("u2", "orchestrator", text("<!-- SLIM_INTERNAL_INITIATOR --> b"))}, nil},
		{"the last has no text part", []any{wanted, reply, user("u2", "orchestrator", map[string]any{"type": "file", "url": "f"})}, nil},
		{"the last has the reminder already", []any{wanted, reply, user("u2", "orchestrator", text("b"), text(reminder))}, nil},
		// Reasoning text is not read (PROTOCOL.md 4.5): quoting the reminder there is not having it.
		{"the reminder only in a reasoning part", []any{user("u2", "orchestrator", text("b"), map[string]any{"type": "reasoning", "text": reminder})}, []string{"/messages/0/parts/-"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newServer(t, map[string]any{"cacheStable": false})
			patch := call(t, s, "chat.messages.transform", map[string]any{"input": map[string]any{}, "output": map[string]any{"messages": tt.messages}})
			var got []string
			for _, op := range patch {
				assert.Equal(t, "add", op["op"])
				assert.Equal(t, reminder, op["value"].(map[string]any)["text"])
				got = append(got, op["path"].(string))
			}
			assert.Equal(t, tt.want, got)
		})
	}
}

// TestSessionDeletedEvent: the id of the deleted session is
// properties.info.id, else properties.sessionID (PROTOCOL.md 4.2); each
// form forgets what is remembered under that parent or for that child.
func TestSessionDeletedEvent(t *testing.T) {
	tests := []struct {
		name       string
		event      map[string]any
		parentKept bool
	}{
		{"properties.info.id", map[string]any{"type": "session.deleted", "properties": map[string]any{"info": map[string]any{"id": "ses_parent"}}}, false},
		{"properties.sessionID", map[string]any{"type": "session.deleted", "properties": map[string]any{"sessionID": "ses_parent"}}, false},
		{"properties.sessionID of the child", map[string]any{"type": "session.deleted", "properties": map[string]any{"sessionID": "ses_child"}}, false},
		{"a blank info.id falls back to sessionID", map[string]any{"type": "session.deleted",
			"properties": map[string]any{"info": map[string]any{"id": ""}, "sessionID": "ses_parent"}}, false},
		{"info.id comes before sessionID", map[string]any{"type": "session.deleted",
			"properties": map[string]any{"info": map[string]any{"id": "ses_other"}, "sessionID": "ses_parent"}}, true},
		{"a sessionID that is not a string", map[string]any{"type": "session.deleted", "properties": map[string]any{"sessionID": 42}}, true},
		{"another event type", map[string]any{"type": "session.updated", "properties": map[string]any{"sessionID": "ses_parent"}}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newServer(t, nil)
			call(t, s, "chat.message", map[string]any{"input": map[string]any{"sessionID": "ses_parent", "agent": "orchestrator"}})
			delegate(t, s, "ses_parent", "c1", "explorer", "ses_child", "")
			require.Len(t, s.store.Tasks().List("ses_parent"), 1)
			assert.Empty(t, call(t, s, "event", map[string]any{"input": map[string]any{"event": tt.event}}))
			assert.Equal(t, tt.parentKept, len(s.store.Tasks().List("ses_parent")) == 1)
		})
	}
}
