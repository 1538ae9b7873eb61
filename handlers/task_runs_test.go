package handlers

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hookwire/hookwire/rpc"
	"github.com/hookwire/hookwire/sessions"
)

// TestRunStateThroughHooks plays a resume of exp-1 the way OpenCode's hooks
// report it and checks the run state sessions.list gives.
func TestRunStateThroughHooks(t *testing.T) {
	const parent = "ses_parent"
	errored := func(tool, callID, text string) map[string]any {
		return map[string]any{"input": map[string]any{}, "output": map[string]any{"messages": []any{
			map[string]any{"info": map[string]any{"id": "msg_u1", "role": "user", "agent": "orchestrator", "sessionID": parent},
				"parts": []any{map[string]any{"type": "text", "text": "go"}}},
			map[string]any{"info": map[string]any{"id": "msg_a1", "role": "assistant", "sessionID": parent},
				"parts": []any{map[string]any{"type": "tool", "tool": tool, "callID": callID,
					"state": map[string]any{"status": "error", "error": text}}}},
		}}}
	}
	before := func(t *testing.T, s *Server, callID string) {
		call(t, s, "tool.execute.before", map[string]any{"input": map[string]any{"tool": "task", "sessionID": parent, "callID": callID},
			"output": map[string]any{"args": map[string]any{"description": "again", "prompt": "p", "subagent_type": "explorer", "task_id": "exp-1"}}})
	}
	tests := []struct {
		name string
		play func(t *testing.T, s *Server)
		want sessions.Run
	}{
		{"fresh task", func(*testing.T, *Server) {}, sessions.Run{State: sessions.RunCompleted}},
		{"resume in flight", func(t *testing.T, s *Server) { before(t, s, "c2") }, sessions.Run{State: sessions.RunRunning}},
		{"resume thrown by the native task tool", func(t *testing.T, s *Server) {
			before(t, s, "c2")
			call(t, s, "chat.messages.transform", errored("task", "c2", "Provider error: overloaded"))
		}, sessions.Run{State: sessions.RunError, Error: "Provider error: overloaded"}},
		{"errored part of another tool", func(t *testing.T, s *Server) {
			before(t, s, "c2")
			call(t, s, "chat.messages.transform", errored("bash", "c2", "exit 1"))
		}, sessions.Run{State: sessions.RunRunning}},
		{"resume completed", func(t *testing.T, s *Server) {
			delegate(t, s, parent, "c2", "explorer", "ses_child", "exp-1")
		}, sessions.Run{State: sessions.RunCompleted}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newServer(t, nil)
			call(t, s, "chat.message", map[string]any{"input": map[string]any{"sessionID": parent, "agent": "orchestrator"},
				"output": map[string]any{"message": map[string]any{}, "parts": []any{}}})
			delegate(t, s, parent, "c1", "explorer", "ses_child", "")
			tt.play(t, s)
			res, err := s.Dispatch(context.Background(), rpc.Request{Method: "sessions.list", Params: mustJSON(t, map[string]any{})})
			require.NoError(t, err)
			list := res.([]sessions.Entry)
			require.Len(t, list, 1)
			assert.Equal(t, "exp-1", list[0].Alias)
			assert.Equal(t, tt.want, list[0].Run)
		})
	}
}
