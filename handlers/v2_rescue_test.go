package handlers

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hookwire/hookwire/core"
)

// OpenCode 2's same-call rescue (issue 40; PROTOCOL.md 4.8 "On OpenCode
// 2"): the child's retry hook reports each failed attempt with inPlace,
// the child's agent and, while the call is in flight, its parent; where
// 1.x would abort and rescue (a subagent with a fallback), the answer is
// "switch" to the fallback, which the client sets on the session before
// the next attempt.
func TestModelFailedInPlace(t *testing.T) {
	entry := map[string]any{"model": "fake/fake-model-2", "fallbackChain": []any{map[string]any{"providers": []string{"fake"}, "model": "fake-model-3"}}}
	rateLimit := func(session, model string, extra map[string]any) map[string]any {
		p := map[string]any{"sessionID": session, "model": map[string]any{"providerID": "fake", "modelID": model},
			"error": map[string]any{"statusCode": 429, "name": "provider.rate-limit", "message": "Rate limit reached for " + model}, "inPlace": true}
		for k, v := range extra {
			p[k] = v
		}
		return p
	}

	t.Run("a subagent's child switches to its fallback, once per cooldown", func(t *testing.T) {
		r := v2ModelRig(t, entry)
		res := r.failed(rateLimit("ses_c1", "fake-model-2", map[string]any{"agent": "explore", "parentID": "ses_p"}))
		assert.True(t, res.Counted)
		assert.Equal(t, "rate-limit", res.Class)
		assert.Equal(t, "switch", res.Action)
		require.NotNil(t, res.Fallback)
		assert.Equal(t, core.ModelRef{ProviderID: "fake", ModelID: "fake-model-3"}, *res.Fallback)
		assert.Equal(t, "explore", r.s.Store().Tracked().Agent("ses_c1"), "the agent the hook named is kept")
		assert.Equal(t, "ses_p", r.s.Store().Tracked().Parent("ses_c1"))
		sw := r.s.Store().Tracked().Switches("ses_c1")
		require.Len(t, sw, 1, "the switch is recorded as 1.x's are")
		assert.Equal(t, "fake/fake-model-2", sw[0].From)
		assert.Equal(t, "fake/fake-model-3", sw[0].To)

		// The same failure again (the next retry's hook before the switch
		// took): moved off it already, nothing more to do.
		again := r.failed(rateLimit("ses_c1", "fake-model-2", map[string]any{"agent": "explore", "parentID": "ses_p"}))
		assert.Equal(t, "none", again.Action)
	})

	t.Run("without inPlace a subagent is aborted and rescued, as on 1.x", func(t *testing.T) {
		r := v2ModelRig(t, entry)
		p := rateLimit("ses_c1", "fake-model-2", map[string]any{"agent": "explore", "parentID": "ses_p"})
		delete(p, "inPlace")
		assert.Equal(t, "abort", r.failed(p).Action)
	})

	t.Run("a session with neither a parent nor an entry is not switched", func(t *testing.T) {
		r := v2ModelRig(t, entry)
		res := r.failed(rateLimit("ses_lone", "fake-model-2", map[string]any{"agent": "general"}))
		assert.True(t, res.Counted, "its failure still makes the model's health")
		assert.Equal(t, "none", res.Action)
	})

	t.Run("the switches of one child are bounded", func(t *testing.T) {
		// A chain of fallbacks that all fail: each is left at most once,
		// and no more than maxInPlaceSwitches in all.
		models := []string{"m1", "m2", "m3", "m4", "m5", "m6"}
		var chain []any
		for _, m := range models[1:] {
			chain = append(chain, map[string]any{"providers": []string{"fake"}, "model": m})
		}
		r := newFallbackRig(t, map[string]any{"taskTools": []string{"subagent"}, "subagents": []string{"explore"},
			"agentModels": map[string]any{"explore": map[string]any{"model": "fake/m1", "fallbackChain": chain}}})
		var available []string
		for _, m := range models {
			available = append(available, "fake/"+m)
		}
		notify(t, r.s, "providers.update", map[string]any{"connectedProviders": []string{"fake"}, "availableModels": available, "defaultModel": "fake/m1"})
		var switched []string
		for _, m := range models {
			res := r.failed(rateLimit("ses_c1", m, map[string]any{"agent": "explore", "parentID": "ses_p"}))
			if res.Action == "switch" {
				switched = append(switched, fmt.Sprintf("%s->%s", m, res.Fallback.ModelID))
			}
		}
		assert.Equal(t, []string{"m1->m2", "m2->m3", "m3->m4"}, switched)
	})
}

// A stock agent with no agentModels entry runs on its parent's model; when
// that model cools down and the configuration names a fallback for it
// (another agent's entry on that model), the call gets the fallback, on
// OpenCode 2 (the subagent call's model input) as on 1.x (the child's
// chat.message).
func TestCoolingModelSkippedForAnAgentWithoutAnEntry(t *testing.T) {
	entry := map[string]any{"model": "fake/fake-model-2", "fallbackChain": []any{map[string]any{"providers": []string{"fake"}, "model": "fake-model-3"}}}

	t.Run("OpenCode 2", func(t *testing.T) {
		r := v2ModelRig(t, entry)
		// The parent's request on fake-model-2, as the bridge's context hook says it.
		call(t, r.s, "chat.system.transform", map[string]any{"input": map[string]any{"sessionID": "ses_p",
			"model": map[string]any{"providerID": "fake", "modelID": "fake-model-2"}}, "output": map[string]any{"system": []string{"base"}}})
		require.Equal(t, "fake/fake-model-2", r.s.Store().Tracked().Running("ses_p"))
		args := map[string]any{"agent": "general", "description": "d", "prompt": "p"}
		assert.Empty(t, modelOps(r.subagentBefore("call_0", args)), "a healthy parent model is v2's to use")

		r.failed(map[string]any{"sessionID": "ses_c1", "model": "fake/fake-model-2", "error": map[string]any{"statusCode": 429, "message": "Rate limit"}})
		ops := modelOps(r.subagentBefore("call_1", args))
		assert.Equal(t, []map[string]any{{"op": "add", "path": "/args/model", "value": "fake/fake-model-3"}}, ops)
		r.subagentAfter("call_1", "", "<subagent sessionID=\"ses_g1\" state=\"completed\">\ndone\n</subagent>")
		sw := r.s.Store().Tracked().Switches("ses_g1")
		require.Len(t, sw, 1, "the child of general keeps the switch")
		assert.Equal(t, "fake/fake-model-2", sw[0].From)
		assert.Contains(t, sw[0].Reason, "cooling until")

		// A model the call names stays the user's choice.
		named := map[string]any{"agent": "general", "description": "d", "prompt": "p", "model": "fake/fake-model-2"}
		assert.Empty(t, modelOps(r.subagentBefore("call_2", named)))
	})

	t.Run("OpenCode 1.x", func(t *testing.T) {
		r := newFallbackRig(t, map[string]any{"agentModels": map[string]any{"explore": entry}})
		r.failed(map[string]any{"sessionID": "ses_x", "model": "fake/fake-model-2", "error": map[string]any{"statusCode": 429, "message": "Rate limit"}})
		// general's child, on its parent's cooling model.
		call(t, r.s, "chat.message", chatMessageOf("ses_p", "build", "fake", "fake-model-2", ""))
		notify(t, r.s, "event", map[string]any{"input": map[string]any{"event": map[string]any{"type": "session.created",
			"properties": map[string]any{"sessionID": "ses_g", "info": map[string]any{"id": "ses_g", "parentID": "ses_p", "agent": "general"}}}}})
		ops := call(t, r.s, "chat.message", chatMessageOf("ses_g", "general", "fake", "fake-model-2", ""))
		require.Len(t, ops, 1)
		assert.Equal(t, map[string]any{"providerID": "fake", "modelID": "fake-model-3"}, ops[0]["value"])
	})
}

// The retry guidance of a failed subagent call names the call's own
// agent and its own child's alias (issue 40: it named the first
// configured subagent, general, with explore's alias exp-2, and following
// it started a new general child).
func TestGuidanceNamesTheFailingCall(t *testing.T) {
	// general is the first configured subagent, as in the report.
	r := newFallbackRig(t, map[string]any{"cacheStable": false, "taskTools": []string{"subagent"},
		"primaryAgents": []string{"build"}, "subagents": []string{"general", "explore"},
		"agentModels": map[string]any{"explore": map[string]any{"model": "fake/fake-model-2"}}})
	call(t, r.s, "chat.message", map[string]any{"input": map[string]any{"sessionID": "ses_p", "agent": "build"},
		"output": map[string]any{"message": map[string]any{}, "parts": []any{}}})
	r.subagentBefore("call_1", map[string]any{"agent": "explore", "description": "first", "prompt": "p"})
	r.subagentAfter("call_1", "", "<subagent sessionID=\"ses_e1\" state=\"completed\">\ndone\n</subagent>")
	r.subagentBefore("call_2", map[string]any{"agent": "general", "description": "other", "prompt": "p"})
	r.subagentAfter("call_2", "", "<subagent sessionID=\"ses_g1\" state=\"completed\">\ndone\n</subagent>")
	r.subagentBefore("call_3", map[string]any{"agent": "explore", "description": "second", "prompt": "p"})
	ops := r.subagentAfter("call_3", "error", "Subagent failed (sessionID: ses_e2): Rate limit reached for fake-model-2")
	require.Len(t, ops, 1)
	text := ops[0]["value"].(string)
	assert.Contains(t, text, `Example: subagent(agent="explore", `)
	assert.Contains(t, text, `sessionID="exp-2")`)
	assert.NotContains(t, text, `agent="general"`)
}

// A resume naming an alias no entry holds runs fresh (its resume argument
// removed, 4.2), and the call's output tells the model so, on both tools
// (issue 42 item 4: the model and the user were told nothing).
func TestUnknownAliasIsTold(t *testing.T) {
	t.Run("OpenCode 2's subagent tool", func(t *testing.T) {
		r := v2ModelRig(t, map[string]any{"model": "fake/fake-model-2"})
		ops := r.subagentBefore("call_1", map[string]any{"agent": "explore", "description": "d", "prompt": "p", "sessionID": "exp-7"})
		assert.Contains(t, ops, map[string]any{"op": "remove", "path": "/args/sessionID"})
		after := r.subagentAfter("call_1", "", "<subagent sessionID=\"ses_new\" state=\"completed\">\ndone\n</subagent>")
		require.Len(t, after, 1)
		assert.Equal(t, "<subagent sessionID=\"ses_new\" state=\"completed\">\ndone\n</subagent>\n\n"+
			`[hookwire] sessionID "exp-7" named no session hookwire remembers (forgotten, or never made), so this call started a new session with no earlier history.`,
			after[0]["value"])
		name, agent := r.s.Store().Tasks().ResumeName("ses_p", "ses_new")
		assert.Equal(t, []string{"exp-1", "explore"}, []string{name, agent}, "listed as a new entry")
		// A later call with the same call id is not told again.
		assert.Empty(t, r.subagentAfter("call_1", "", "<subagent sessionID=\"ses_new\" state=\"completed\">\nagain\n</subagent>"))
	})
	t.Run("1.x's task tool, the note after the guidance of a failed call", func(t *testing.T) {
		r := newFallbackRig(t, map[string]any{"cacheStable": false})
		call(t, r.s, "chat.message", chatMessageOf("ses_p", "orchestrator", "fake", "fake-model", ""))
		before := call(t, r.s, "tool.execute.before", map[string]any{"input": map[string]any{"tool": "task", "sessionID": "ses_p", "callID": "c1"},
			"output": map[string]any{"args": map[string]any{"subagent_type": "explorer", "description": "d", "prompt": "p", "task_id": "exp-3"}}})
		assert.Contains(t, before, map[string]any{"op": "remove", "path": "/args/task_id"})
		after := call(t, r.s, "tool.execute.after", map[string]any{"input": map[string]any{"tool": "task", "sessionID": "ses_p", "callID": "c1"},
			"output": map[string]any{"output": "[ERROR] delegation depth limit reached"}})
		require.Len(t, after, 1)
		text := after[0]["value"].(string)
		assert.Contains(t, text, "[hookwire retry guidance]")
		assert.True(t, strings.HasSuffix(text, `[hookwire] task_id "exp-3" named no session hookwire remembers (forgotten, or never made), so this call started a new session with no earlier history.`), text)
	})
}
