package handlers

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hookwire/hookwire/config"
	"github.com/hookwire/hookwire/core"
	"github.com/hookwire/hookwire/rpc"
	"github.com/hookwire/hookwire/sessions"
)

func TestParseAgentModels(t *testing.T) {
	rows := []struct {
		name     string
		raw      string
		warnings []string
		want     map[string]config.AgentModel
	}{
		{"absent: none", `{}`, nil, map[string]config.AgentModel{}},
		{"every member", `{"agentModels":{"explorer":{"model":"a/b high","fallbackModels":["c/d"],
			"fallbackChain":[{"providers":["fake"],"model":"m2","variant":"high"}]}}}`, nil,
			map[string]config.AgentModel{"explorer": {Model: "a/b high", FallbackModels: []string{"c/d"},
				FallbackChain: []core.FallbackEntry{{Providers: []string{"fake"}, Model: "m2", Variant: "high"}}}}},
		{"an empty entry is kept", `{"agentModels":{"general":{}}}`, nil, map[string]config.AgentModel{"general": {}}},
		{"bad members cost only themselves", `{"agentModels":{
			"explorer":{"modle":"x/y","fallbackModels":"c/d","fallbackChain":[{"providers":["fake"],"model":"m2"}]},
			"oracle":"fake/fake-model",
			" ":{"model":"x/y"},
			"fixer":{"fallbackModels":["", "c/d"],"fallbackChain":[{"providers":["p"]},7,{"model":"m3"}]}}}`,
			[]string{
				`config.agentModels.explorer.modle: unknown member, ignored (did you mean "model"?)`,
				`config.agentModels.explorer.fallbackModels must be an array, got a string; using the default`,
				`config.agentModels.oracle must be an object, got a string; ignored`,
				`config.agentModels.fixer.fallbackChain[1] must be an object, got a number; ignored`,
				`config.agentModels: " " is not an agent name; ignored`,
				`config.agentModels.fixer.fallbackModels[0] must be a non-empty model; ignored`,
				`config.agentModels.fixer.fallbackChain[0] needs a non-empty model; ignored`,
			},
			nil},
	}
	for _, row := range rows {
		t.Run(row.name, func(t *testing.T) {
			c, warnings, err := config.Parse(jsontext.Value(row.raw))
			require.NoError(t, err)
			if row.want != nil {
				assert.Equal(t, row.warnings, warnings)
				assert.Equal(t, row.want, c.AgentModels)
				return
			}
			// The last row: what is left, and one warning per problem.
			assert.Equal(t, map[string]config.AgentModel{
				"explorer": {FallbackChain: []core.FallbackEntry{{Providers: []string{"fake"}, Model: "m2"}}},
				"fixer":    {FallbackModels: []string{"c/d"}, FallbackChain: []core.FallbackEntry{{Model: "m3"}}},
			}, c.AgentModels)
			assert.Equal(t, row.warnings, warnings, "in the order of the members, then of the agents' names")
		})
	}
}

// modelsConfig is the agentModels of the e2e: explorer is configured on a
// provider that is not connected and falls back through its chain; oracle
// is on an available model.
var modelsConfig = map[string]any{"agentModels": map[string]any{
	"explorer": map[string]any{"fallbackChain": []any{
		map[string]any{"providers": []string{"anthropic"}, "model": "claude-sonnet-4-6"},
		map[string]any{"providers": []string{"fake"}, "model": "fake-model-2"},
	}},
	"oracle":  map[string]any{"fallbackChain": []any{map[string]any{"providers": []string{"fake"}, "model": "fake-model-2"}}},
	"fixer":   map[string]any{"model": "ghost/any-model", "fallbackModels": []string{"fake/fake-model-2 high"}},
	"pinned":  map[string]any{"model": "ghost/any-model"},
	"variant": map[string]any{"fallbackModels": []string{"fake/fake-model high"}},
	"nothing": map[string]any{},
}}

var fakeProviders = map[string]any{
	"connectedProviders": []string{"fake", "opencode"},
	"availableModels":    []string{"fake/fake-model", "fake/fake-model-2", "opencode/big-pickle"},
	"defaultModel":       "fake/fake-model",
}

// chatMessageParams builds chat.message params as OpenCode 1.18 sends them:
// the model on input and on output.message, the variant inside the
// message's model.
func chatMessageOf(session, agent, provider, model, variant string) map[string]any {
	m := map[string]any{"providerID": provider, "modelID": model}
	if variant != "" {
		m["variant"] = variant
	}
	return map[string]any{
		"input": map[string]any{"sessionID": session, "agent": agent, "model": map[string]any{"providerID": provider, "modelID": model}},
		"output": map[string]any{
			"message": map[string]any{"id": "msg_1", "role": "user", "sessionID": session, "agent": agent, "model": m},
			"parts":   []any{},
		},
	}
}

func notify(t *testing.T, s *Server, method string, params any) {
	t.Helper()
	_, err := s.Dispatch(context.Background(), rpc.Request{Method: method, Params: mustJSON(t, params), Notification: true})
	require.NoError(t, err)
}

func TestChatMessageModelDecision(t *testing.T) {
	replace := func(provider, model, variant string) []map[string]any {
		v := map[string]any{"providerID": provider, "modelID": model}
		if variant != "" {
			v["variant"] = variant
		}
		return []map[string]any{{"op": "replace", "path": "/message/model", "value": v}}
	}
	rows := []struct {
		name      string
		providers map[string]any // nil: no providers.update
		params    map[string]any
		patch     []map[string]any
		decision  *sessions.ModelDecision
	}{
		{"not connected: the chain's fallback", fakeProviders,
			chatMessageOf("ses_c", "explorer", "anthropic", "claude-sonnet-4-6", ""),
			replace("fake", "fake-model-2", ""),
			&sessions.ModelDecision{Model: "fake/fake-model-2", Rung: core.RungFallbackChain, Changed: true}},
		{"available: left alone", fakeProviders,
			chatMessageOf("ses_c", "oracle", "fake", "fake-model", ""),
			nil, &sessions.ModelDecision{Model: "fake/fake-model", Rung: core.RungCategoryDefault}},
		{"an agent without an entry: nothing", fakeProviders,
			chatMessageOf("ses_c", "general", "anthropic", "claude-sonnet-4-6", ""), nil, nil},
		{"before providers.update: nothing", nil,
			chatMessageOf("ses_c", "explorer", "anthropic", "claude-sonnet-4-6", ""), nil, nil},
		{"an unavailable override promotes the user fallback, with its variant", fakeProviders,
			chatMessageOf("ses_c", "fixer", "fake", "fake-model", ""),
			replace("fake", "fake-model-2", "high"),
			&sessions.ModelDecision{Model: "fake/fake-model-2", Variant: "high", Rung: core.RungUserFallbackPromoted, Changed: true}},
		{"an override without fallbacks is answered as given", fakeProviders,
			chatMessageOf("ses_c", "pinned", "fake", "fake-model", ""),
			replace("ghost", "any-model", ""),
			&sessions.ModelDecision{Model: "ghost/any-model", Rung: core.RungUser, Changed: true}},
		{"the same model with a new variant", map[string]any{"availableModels": []string{"fake/fake-model"}},
			chatMessageOf("ses_c", "variant", "anthropic", "claude-sonnet-4-6", ""),
			replace("fake", "fake-model", "high"),
			&sessions.ModelDecision{Model: "fake/fake-model", Variant: "high", Rung: core.RungUserFallback, Changed: true}},
		{"the message's variant stays when the answer has none", fakeProviders,
			chatMessageOf("ses_c", "oracle", "fake", "fake-model", "low"),
			nil, &sessions.ModelDecision{Model: "fake/fake-model", Variant: "low", Rung: core.RungCategoryDefault}},
		{"a new model drops the old model's variant", fakeProviders,
			chatMessageOf("ses_c", "explorer", "anthropic", "claude-sonnet-4-6", "max"),
			replace("fake", "fake-model-2", ""),
			&sessions.ModelDecision{Model: "fake/fake-model-2", Rung: core.RungFallbackChain, Changed: true}},
		{"nothing answers: the model stays, no rung", map[string]any{"availableModels": []string{"opencode/big-pickle"}},
			chatMessageOf("ses_c", "nothing", "anthropic", "claude-sonnet-4-6", ""),
			nil, &sessions.ModelDecision{Model: "anthropic/claude-sonnet-4-6"}},
		{"nothing else: OpenCode's default model", map[string]any{"availableModels": []string{"fake/fake-model"}, "defaultModel": "fake/fake-model"},
			chatMessageOf("ses_c", "nothing", "anthropic", "claude-sonnet-4-6", ""),
			replace("fake", "fake-model", ""),
			&sessions.ModelDecision{Model: "fake/fake-model", Rung: core.RungSystemDefault, Changed: true}},
		{"a default that is not provider/model is not applied", map[string]any{"availableModels": []string{}, "connectedProviders": []string{}, "defaultModel": "bare"},
			chatMessageOf("ses_c", "nothing", "anthropic", "claude-sonnet-4-6", ""),
			nil, &sessions.ModelDecision{Model: "anthropic/claude-sonnet-4-6", Rung: core.RungSystemDefault}},
		{"no models known, connected providers known: the chain's connected provider",
			map[string]any{"connectedProviders": []string{"fake"}},
			chatMessageOf("ses_c", "explorer", "anthropic", "claude-sonnet-4-6", ""),
			replace("fake", "fake-model-2", ""),
			&sessions.ModelDecision{Model: "fake/fake-model-2", Rung: core.RungFallbackChain, Changed: true}},
		{"the model only on input: added to the message", fakeProviders,
			map[string]any{
				"input":  map[string]any{"sessionID": "ses_c", "agent": "explorer", "model": map[string]any{"providerID": "anthropic", "modelID": "claude-sonnet-4-6"}},
				"output": map[string]any{"message": map[string]any{"id": "msg_1"}, "parts": []any{}},
			},
			[]map[string]any{{"op": "add", "path": "/message/model", "value": map[string]any{"providerID": "fake", "modelID": "fake-model-2"}}},
			&sessions.ModelDecision{Model: "fake/fake-model-2", Rung: core.RungFallbackChain, Changed: true}},
		{"no message to patch: decided, not changed", fakeProviders,
			map[string]any{"input": map[string]any{"sessionID": "ses_c", "agent": "explorer", "model": map[string]any{"providerID": "anthropic", "modelID": "claude-sonnet-4-6"}}},
			nil, &sessions.ModelDecision{Model: "anthropic/claude-sonnet-4-6", Rung: core.RungFallbackChain}},
		{"a model of the wrong shape is no model", fakeProviders,
			map[string]any{
				"input":  map[string]any{"sessionID": "ses_c", "agent": "oracle", "model": "fake/fake-model"},
				"output": map[string]any{"message": map[string]any{"model": []any{1}}},
			},
			[]map[string]any{{"op": "replace", "path": "/message/model", "value": map[string]any{"providerID": "fake", "modelID": "fake-model-2"}}},
			&sessions.ModelDecision{Model: "fake/fake-model-2", Rung: core.RungFallbackChain, Changed: true}},
	}
	for _, row := range rows {
		t.Run(row.name, func(t *testing.T) {
			s := newServer(t, modelsConfig)
			if row.providers != nil {
				notify(t, s, "providers.update", row.providers)
			}
			got := call(t, s, "chat.message", row.params)
			if row.patch == nil {
				assert.Empty(t, got)
			} else {
				assert.Equal(t, row.patch, got)
			}
			d, ok := s.store.(*sessions.Store).Tracked().ModelDecision("ses_c")
			if row.decision == nil {
				assert.False(t, ok, "no decision kept: %+v", d)
				return
			}
			require.True(t, ok)
			assert.Equal(t, *row.decision, d)
		})
	}
}

// Decisions show in sessions.list (for the task session) and in status,
// counted by rung; chat.messages before the first providers.update are
// counted as waiting.
func TestModelDecisionVisibility(t *testing.T) {
	s := newServer(t, modelsConfig)
	call(t, s, "chat.message", chatMessageOf("ses_early", "explorer", "anthropic", "claude-sonnet-4-6", ""))
	notify(t, s, "providers.update", fakeProviders)
	call(t, s, "chat.message", chatMessageOf("ses_c1", "explorer", "anthropic", "claude-sonnet-4-6", ""))
	call(t, s, "chat.message", chatMessageOf("ses_c2", "oracle", "fake", "fake-model", ""))
	call(t, s, "chat.message", chatMessageOf("ses_c3", "general", "fake", "fake-model", ""))

	// The orchestrator's task call that started ses_c1.
	call(t, s, "chat.message", map[string]any{"input": map[string]any{"sessionID": "ses_p", "agent": "orchestrator"}})
	call(t, s, "tool.execute.before", map[string]any{
		"input":  map[string]any{"tool": "task", "sessionID": "ses_p", "callID": "call_1"},
		"output": map[string]any{"args": map[string]any{"subagent_type": "explorer", "description": "look", "prompt": "p"}},
	})
	call(t, s, "tool.execute.after", map[string]any{
		"input":  map[string]any{"tool": "task", "sessionID": "ses_p", "callID": "call_1"},
		"output": map[string]any{"output": "<task id=\"ses_c1\" state=\"completed\">\n</task>"},
	})
	res, err := s.Dispatch(context.Background(), rpc.Request{Method: "sessions.list", Params: json.RawMessage(`{}`)})
	require.NoError(t, err)
	var list []map[string]any
	require.NoError(t, json.Unmarshal(mustJSON(t, res), &list))
	require.Len(t, list, 1)
	assert.Equal(t, map[string]any{"model": "fake/fake-model-2", "rung": "fallback-chain", "changed": true}, list[0]["model"])

	res, err = s.Dispatch(context.Background(), rpc.Request{Method: "status"})
	require.NoError(t, err)
	var status struct {
		Models statusModels `json:"models"`
	}
	require.NoError(t, json.Unmarshal(mustJSON(t, res), &status))
	assert.Equal(t, statusModels{
		Decisions: 2, Changed: 1, WaitingForProviders: 1,
		ByRung:    map[string]uint64{"fallback-chain": 1, "category-default": 1},
		Health:    []statusHealth{},
		Providers: statusProviders{Received: true, Connected: 2, Available: 3, DefaultModel: "fake/fake-model"},
	}, status.Models)
}

func TestProvidersUpdate(t *testing.T) {
	t.Run("each update replaces the last whole; blanks and over-long names are dropped", func(t *testing.T) {
		s := newServer(t, nil)
		notify(t, s, "providers.update", fakeProviders)
		long := string(make([]byte, sessions.MaxModelBytes+1))
		notify(t, s, "providers.update", map[string]any{"availableModels": []string{" fake/fake-model ", "", long}})
		assert.True(t, s.models.received)
		assert.Nil(t, s.models.connected, "absent: unknown")
		assert.Equal(t, []string{"fake/fake-model"}, s.models.available)
		assert.Empty(t, s.models.defaultModel)
	})
	t.Run("bad params change nothing", func(t *testing.T) {
		s := newServer(t, nil)
		notify(t, s, "providers.update", fakeProviders)
		for _, params := range []string{`{"availableModels":"fake/x"}`, `{"connectedProviders":[1]}`, `[]`, `{"defaultModel":7}`} {
			_, err := s.Dispatch(context.Background(), rpc.Request{Method: "providers.update", Params: json.RawMessage(params)})
			var rerr *rpc.Error
			require.ErrorAs(t, err, &rerr, params)
			assert.Equal(t, rpc.CodeInvalidParams, rerr.Code, params)
		}
		assert.Equal(t, []string{"fake/fake-model", "fake/fake-model-2", "opencode/big-pickle"}, s.models.available)
		assert.Equal(t, []string{"fake", "opencode"}, s.models.connected)
	})
	t.Run("listed in capabilities.methods", func(t *testing.T) {
		s := New(Options{Version: "test"})
		res, err := s.Dispatch(context.Background(), rpc.Request{Method: "initialize", Params: json.RawMessage(`{"protocolVersion":1}`)})
		require.NoError(t, err)
		assert.Contains(t, res.(initializeResult).Capabilities.Methods, "providers.update")
	})
}
