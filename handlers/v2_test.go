package handlers

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// OpenCode 2's subagent tool through the tool hooks (PROTOCOL.md 4.1,
// 4.2): its agent and resume arguments, its result forms and its failed
// calls (input.status "error") as data, with stock agents.
func v2Server(t *testing.T) *Server {
	s := newServer(t, map[string]any{"cacheStable": false, "taskTools": []string{"subagent"}, "primaryAgents": []string{"build", "plan"}, "subagents": []string{"explore", "general"}})
	call(t, s, "chat.message", map[string]any{"input": map[string]any{"sessionID": "ses_p", "agent": "build"},
		"output": map[string]any{"message": map[string]any{}, "parts": []any{}}})
	return s
}

func subagentCall(t *testing.T, s *Server, callID string, args map[string]any, status, output string) ([]map[string]any, []map[string]any) {
	t.Helper()
	before := call(t, s, "tool.execute.before", map[string]any{"input": map[string]any{"tool": "subagent", "sessionID": "ses_p", "callID": callID},
		"output": map[string]any{"args": args}})
	in := map[string]any{"tool": "subagent", "sessionID": "ses_p", "callID": callID}
	if status != "" {
		in["status"] = status
	}
	after := call(t, s, "tool.execute.after", map[string]any{"input": in, "output": map[string]any{"output": output}})
	return before, after
}

func TestSubagentToolV2(t *testing.T) {
	s := v2Server(t)
	args := func(agent string, extra ...string) map[string]any {
		a := map[string]any{"agent": agent, "description": "Look around", "prompt": "List the files"}
		for i := 0; i+1 < len(extra); i += 2 {
			a[extra[i]] = extra[i+1]
		}
		return a
	}
	_, after := subagentCall(t, s, "call_1", args("explore"), "", "<subagent sessionID=\"ses_e1\" state=\"completed\">\nREADME.md\n</subagent>")
	assert.Empty(t, after)
	subagentCall(t, s, "call_2", args("general"), "", "<subagent sessionID=\"ses_g1\" state=\"completed\">\nsummary\n</subagent>")
	entries := s.Store().Tasks().List("ses_p")
	require.Len(t, entries, 2)
	aliases := map[string]string{}
	for _, e := range entries {
		aliases[e.Alias] = e.TaskID
	}
	assert.Equal(t, map[string]string{"exp-1": "ses_e1", "gen-1": "ses_g1"}, aliases)

	// The block teaches v2's resume argument.
	sys := call(t, s, "chat.system.transform", map[string]any{"input": map[string]any{"sessionID": "ses_p"}, "output": map[string]any{"system": []string{"You are build."}}})
	require.NotEmpty(t, sys)
	block, _ := sys[0]["value"].(string)
	assert.Contains(t, block, "### Resumable Sessions")
	assert.Contains(t, block, "as sessionID only")
	assert.Contains(t, block, "- explore: exp-1 Look around")

	t.Run("an alias as sessionID becomes the child's id", func(t *testing.T) {
		before, _ := subagentCall(t, s, "call_3", args("explore", "sessionID", "exp-1"), "", "<subagent sessionID=\"ses_e1\" state=\"completed\">\nagain\n</subagent>")
		assert.Equal(t, []map[string]any{{"op": "replace", "path": "/args/sessionID", "value": "ses_e1"}}, before)
	})
	t.Run("an unknown alias is removed: a fresh child", func(t *testing.T) {
		before := call(t, s, "tool.execute.before", map[string]any{"input": map[string]any{"tool": "subagent", "sessionID": "ses_p", "callID": "call_x"},
			"output": map[string]any{"args": args("explore", "sessionID", "exp-9")}})
		assert.Equal(t, []map[string]any{{"op": "remove", "path": "/args/sessionID"}}, before)
	})
	t.Run("a failed call gets guidance naming v2's call and agents", func(t *testing.T) {
		_, after := subagentCall(t, s, "call_4", args("nonexistent"), "error", "Unknown agent: nonexistent")
		require.Len(t, after, 1)
		assert.Equal(t, "/output", after[0]["path"])
		text, _ := after[0]["value"].(string)
		assert.True(t, strings.HasPrefix(text, "Unknown agent: nonexistent\n[hookwire retry guidance]"), text)
		assert.Contains(t, text, "Available: explore, general")
		assert.Contains(t, text, `Example: subagent(agent="explore"`)
		assert.NotContains(t, text, "subagent_type")
	})
	t.Run("the same text completed is not an error", func(t *testing.T) {
		_, after := subagentCall(t, s, "call_5", args("explore"), "", "Unknown agent: nonexistent")
		assert.Empty(t, after)
	})
	t.Run("a failed child is remembered failed, and the guidance resumes it by alias", func(t *testing.T) {
		_, after := subagentCall(t, s, "call_6", args("general"), "error", "Subagent failed (sessionID: ses_g2): Rate limit reached for fake-model-3")
		require.Len(t, after, 1)
		text, _ := after[0]["value"].(string)
		assert.Contains(t, text, `sessionID="gen-2"`)
		var run string
		for _, e := range s.Store().Tasks().List("ses_p") {
			if e.TaskID == "ses_g2" {
				run = e.Run.State
				assert.Contains(t, e.Run.Error, "Rate limit reached")
			}
		}
		assert.Equal(t, "error", run)
	})
	t.Run("a background child is running", func(t *testing.T) {
		subagentCall(t, s, "call_7", args("explore"), "", "The subagent is working in the background (sessionID: ses_bg). You will be notified automatically when it finishes.")
		var run, alias string
		for _, e := range s.Store().Tasks().List("ses_p") {
			if e.TaskID == "ses_bg" {
				run, alias = e.Run.State, e.Alias
			}
		}
		assert.Equal(t, "running", run)
		assert.Equal(t, "exp-2", alias)
	})
}

// TestTaskToolUnchangedBesideV2: the 1.x task tool keeps its arguments
// when subagent is configured beside it.
func TestTaskToolUnchangedBesideV2(t *testing.T) {
	s := newServer(t, map[string]any{"cacheStable": false, "taskTools": []string{"task", "subagent"}})
	call(t, s, "chat.message", map[string]any{"input": map[string]any{"sessionID": "ses_p", "agent": "orchestrator"},
		"output": map[string]any{"message": map[string]any{}, "parts": []any{}}})
	delegate(t, s, "ses_p", "call_1", "explorer", "ses_child1", "")
	got := call(t, s, "tool.execute.before", map[string]any{"input": map[string]any{"tool": "task", "sessionID": "ses_p", "callID": "call_2"},
		"output": map[string]any{"args": map[string]any{"subagent_type": "explorer", "task_id": "exp-1"}}})
	assert.Equal(t, []map[string]any{{"op": "replace", "path": "/args/task_id", "value": "ses_child1"}}, got)
	sys := call(t, s, "chat.system.transform", map[string]any{"input": map[string]any{"sessionID": "ses_p"}, "output": map[string]any{"system": []string{"x"}}})
	require.NotEmpty(t, sys)
	assert.Contains(t, sys[0]["value"], "as task_id only", "the first configured tool's argument")
}
