package handlers

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hookwire/hookwire/config"
	"github.com/hookwire/hookwire/core"
	"github.com/hookwire/hookwire/rpc"
	"github.com/hookwire/hookwire/sessions"
)

// fallbackRig is a server with a clock the test moves, on the providers
// of the e2e: fake/fake-model (the orchestrator's), fake-model-2 and
// fake-model-3.
type fallbackRig struct {
	t   *testing.T
	s   *Server
	now time.Time
}

func newFallbackRig(t *testing.T, config map[string]any) *fallbackRig {
	r := &fallbackRig{t: t, now: time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)}
	r.s = New(Options{Version: "test", Log: zerolog.Nop(), Now: func() time.Time { return r.now }})
	params := map[string]any{"protocolVersion": 1}
	if config != nil {
		params["config"] = config
	}
	_, err := r.s.Dispatch(context.Background(), rpc.Request{Method: "initialize", Params: mustJSON(t, params)})
	require.NoError(t, err)
	notify(t, r.s, "providers.update", map[string]any{"connectedProviders": []string{"fake"},
		"availableModels": []string{"fake/fake-model", "fake/fake-model-2", "fake/fake-model-3"}, "defaultModel": "fake/fake-model"})
	return r
}

// child makes a subagent session of parent, on model, as OpenCode does:
// the parent's chat.message, session.created, the child's chat.message.
// It returns the child's chat.message patch.
func (r *fallbackRig) child(parent, session, agent, model string) []map[string]any {
	call(r.t, r.s, "chat.message", chatMessageOf(parent, "orchestrator", "fake", "fake-model", ""))
	notify(r.t, r.s, "event", map[string]any{"input": map[string]any{"event": map[string]any{"type": "session.created",
		"properties": map[string]any{"sessionID": session, "info": map[string]any{"id": session, "parentID": parent, "agent": agent}}}}})
	return call(r.t, r.s, "chat.message", chatMessageOf(session, agent, "fake", model, ""))
}

type failedResult struct {
	Counted  bool           `json:"counted"`
	Class    string         `json:"class"`
	Model    string         `json:"model"`
	Until    *time.Time     `json:"until"`
	Action   string         `json:"action"`
	Fallback *core.ModelRef `json:"fallback"`
	Reason   string         `json:"reason"`
}

func (r *fallbackRig) failed(params map[string]any) failedResult {
	r.t.Helper()
	res, err := r.s.Dispatch(context.Background(), rpc.Request{Method: "model.failed", Params: mustJSON(r.t, params)})
	require.NoError(r.t, err)
	var out failedResult
	require.NoError(r.t, json.Unmarshal(mustJSON(r.t, res), &out))
	return out
}

// retry is what the shim sends for a session.status retry event.
func retry(session string, next time.Time) map[string]any {
	return map[string]any{"sessionID": session, "error": map[string]any{"message": "Rate limit reached for fake-model-3"}, "retryAt": next.UnixMilli()}
}

var explorerFallback = map[string]any{"agentModels": map[string]any{"explorer": map[string]any{"fallbackModels": []string{"fake/fake-model-2"}}}}

func TestModelFailedSubagent(t *testing.T) {
	tests := []struct {
		name   string
		config map[string]any
		agent  string
		want   *core.ModelRef // nil: no action
		rung   string
	}{
		{"agentModels fallback", explorerFallback, "explorer", &core.ModelRef{ProviderID: "fake", ModelID: "fake-model-2"}, "user-fallback"},
		{"no entry: the parent's model", nil, "oracle", &core.ModelRef{ProviderID: "fake", ModelID: "fake-model"}, core.RungParentModel},
		{"turned off for the agent", map[string]any{"agentModels": map[string]any{"explorer": map[string]any{
			"fallbackModels": []string{"fake/fake-model-2"}, "runtimeFallback": false}}}, "explorer", nil, ""},
		{"turned off", map[string]any{"runtimeFallback": map[string]any{"enabled": false}}, "oracle", nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newFallbackRig(t, tt.config)
			assert.Empty(t, r.child("ses_p", "ses_c", tt.agent, "fake-model-3"), "a healthy model is left")
			res := r.failed(retry("ses_c", r.now.Add(2*time.Second)))
			assert.True(t, res.Counted)
			assert.Equal(t, "rate-limit", res.Class)
			assert.Equal(t, "fake/fake-model-3", res.Model)
			require.NotNil(t, res.Until)
			assert.Equal(t, r.now.Add(5*time.Minute), *res.Until, "the cooldown, longer than the retry's 2 s")
			assert.True(t, r.s.store.ProviderHealth().Cooling("fake/fake-model-3", r.now), "health is kept whatever the action")
			if tt.want == nil {
				assert.Equal(t, actionNone, res.Action)
				assert.Nil(t, res.Fallback)
				assert.Empty(t, r.s.store.Tracked().Switches("ses_c"))
				return
			}
			assert.Equal(t, actionAbort, res.Action)
			assert.Equal(t, tt.want, res.Fallback)
			assert.Equal(t, "rate-limit: Rate limit reached for fake-model-3", res.Reason)
			sw := r.s.store.Tracked().Switches("ses_c")
			require.Len(t, sw, 1)
			assert.Equal(t, "fake/fake-model-3", sw[0].From)
			assert.Equal(t, tt.want.Name(), sw[0].To)
			assert.True(t, sw[0].Pending, "not applied until the child is seen on the fallback")
			if d, ok := r.s.store.(*sessions.Store).Tracked().ModelDecision("ses_c"); ok {
				assert.NotEqual(t, tt.want.Name(), d.Model, "no decision says the fallback before the switch applied")
			}

			// OpenCode's next retry event, and the message's error, for the same failure: nothing more.
			r.now = r.now.Add(2 * time.Second)
			again := r.failed(retry("ses_c", r.now.Add(2*time.Second)))
			assert.Equal(t, actionNone, again.Action)
			assert.Len(t, r.s.store.Tracked().Switches("ses_c"), 1)
			h, _ := r.s.store.ProviderHealth().Of("fake/fake-model-3")
			assert.Equal(t, 1, h.Strikes, "a failure while cooling is no repeat")

			// The child seen on the fallback (its rescue prompt): applied.
			r.s.router.switchApplied(context.Background(), "ses_c", tt.want.Name())
			assert.False(t, r.s.store.Tracked().Switches("ses_c")[0].Pending)
			d, ok := r.s.store.(*sessions.Store).Tracked().ModelDecision("ses_c")
			require.True(t, ok)
			assert.Equal(t, tt.want.Name(), d.Model)
			assert.Equal(t, tt.rung, d.Rung)
		})
	}
}

func TestModelFailedNotCounted(t *testing.T) {
	r := newFallbackRig(t, explorerFallback)
	r.child("ses_p", "ses_c", "explorer", "fake-model-3")
	for _, e := range []map[string]any{
		{"statusCode": 400, "message": "This model's maximum context length is 128000 tokens"},
		{"statusCode": 400, "message": "bad tools"},
		{"name": "MessageAbortedError", "message": "aborted"},
	} {
		res := r.failed(map[string]any{"sessionID": "ses_c", "error": e})
		assert.False(t, res.Counted, "%v", e)
		assert.Equal(t, actionNone, res.Action)
	}
	assert.Empty(t, r.s.store.ProviderHealth().List())
}

func TestModelFailedRetryAfterAndModel(t *testing.T) {
	r := newFallbackRig(t, nil)
	r.child("ses_p", "ses_c", "oracle", "fake-model-3")
	// The message's own model wins over the session's record; a long retry-after wins over the cooldown.
	res := r.failed(map[string]any{"sessionID": "ses_c", "model": map[string]any{"providerID": "fake", "modelID": "fake-model-2"},
		"error": map[string]any{"statusCode": 503, "message": "upstream"}, "retryAfter": "900"})
	assert.Equal(t, "server-error", res.Class)
	assert.Equal(t, "fake/fake-model-2", res.Model)
	require.NotNil(t, res.Until)
	assert.Equal(t, r.now.Add(15*time.Minute), *res.Until)
	assert.Equal(t, actionAbort, res.Action)
	assert.Equal(t, &core.ModelRef{ProviderID: "fake", ModelID: "fake-model"}, res.Fallback)
}

func TestModelFailedUserSession(t *testing.T) {
	cfg := map[string]any{"agentModels": map[string]any{"orchestrator": map[string]any{"fallbackModels": []string{"fake/fake-model-2"}}}}
	r := newFallbackRig(t, cfg)
	call(t, r.s, "chat.message", chatMessageOf("ses_u", "orchestrator", "fake", "fake-model", ""))
	res := r.failed(map[string]any{"sessionID": "ses_u", "error": map[string]any{"statusCode": 429, "message": "slow down"}})
	assert.Equal(t, actionResend, res.Action)
	assert.Equal(t, &core.ModelRef{ProviderID: "fake", ModelID: "fake-model-2"}, res.Fallback)

	// The message sent again on the fallback.
	assert.Empty(t, call(t, r.s, "chat.message", chatMessageOf("ses_u", "orchestrator", "fake", "fake-model-2", "")))
	// Once per cooling period: the session left fake-model; its next failure on fake-model-2 has
	// no healthy rung left but fake-model, which still cools: never A -> B -> A.
	r.now = r.now.Add(time.Minute)
	res = r.failed(map[string]any{"sessionID": "ses_u", "error": map[string]any{"statusCode": 529, "message": "Overloaded"}})
	assert.True(t, res.Counted)
	assert.Equal(t, "fake/fake-model-2", res.Model)
	assert.Equal(t, actionNone, res.Action, "never back to fake-model, which still cools")
	assert.Nil(t, res.Fallback)
	assert.Len(t, r.s.store.Tracked().Switches("ses_u"), 1)

	// Cooled: the same thing may happen again, once.
	r.now = r.now.Add(10 * time.Minute)
	call(t, r.s, "chat.message", chatMessageOf("ses_u", "orchestrator", "fake", "fake-model", ""))
	res = r.failed(map[string]any{"sessionID": "ses_u", "error": map[string]any{"statusCode": 429, "message": "slow down"}})
	assert.Equal(t, actionResend, res.Action)
	assert.Equal(t, &core.ModelRef{ProviderID: "fake", ModelID: "fake-model-2"}, res.Fallback)
}

func TestChatMessageAvoidsCoolingModel(t *testing.T) {
	r := newFallbackRig(t, explorerFallback)
	r.child("ses_p", "ses_c1", "explorer", "fake-model-3")
	r.failed(retry("ses_c1", r.now.Add(2*time.Second)))

	// Later calls, another child of another parent: moved before any request.
	r.now = r.now.Add(time.Minute)
	patch := r.child("ses_p2", "ses_c2", "explorer", "fake-model-3")
	require.Len(t, patch, 1)
	assert.Equal(t, "replace", patch[0]["op"])
	assert.Equal(t, "/message/model", patch[0]["path"])
	assert.Equal(t, map[string]any{"providerID": "fake", "modelID": "fake-model-2"}, patch[0]["value"])
	patch = r.child("ses_p2", "ses_c3", "oracle", "fake-model-3")
	require.Len(t, patch, 1)
	assert.Equal(t, map[string]any{"providerID": "fake", "modelID": "fake-model"}, patch[0]["value"], "no entry: the parent's model")
	sw := r.s.store.Tracked().Switches("ses_c3")
	require.Len(t, sw, 1)
	assert.Contains(t, sw[0].Reason, "cooling until 2026-12-01T12:05:00Z")

	// Cooled: the configured model again.
	r.now = r.now.Add(5 * time.Minute)
	assert.Empty(t, r.child("ses_p3", "ses_c4", "explorer", "fake-model-3"))
	assert.Equal(t, "fake/fake-model-3", r.s.store.Tracked().Running("ses_c4"))
}

func TestModelFailedBadParams(t *testing.T) {
	r := newFallbackRig(t, nil)
	for _, params := range []string{`{}`, `{"sessionID":"s"}`, `{"sessionID":"s","error":null}`, `[]`} {
		_, err := r.s.Dispatch(context.Background(), rpc.Request{Method: "model.failed", Params: json.RawMessage(params)})
		var rerr *rpc.Error
		require.ErrorAs(t, err, &rerr, params)
		assert.Equal(t, rpc.CodeInvalidParams, rerr.Code, params)
	}
	// An unknown session with no model: counted, nothing kept, nothing to do.
	res := r.failed(map[string]any{"sessionID": "ses_x", "error": map[string]any{"statusCode": 429}})
	assert.True(t, res.Counted)
	assert.Equal(t, actionNone, res.Action)
	assert.Empty(t, r.s.store.ProviderHealth().List())
}

func TestRuntimeFallbackConfig(t *testing.T) {
	cfg, warnings, err := config.Parse([]byte(`{"runtimeFallback":{"cooldownSeconds":-1,"windowSeconds":60,"enabled":false}}`))
	require.NoError(t, err)
	assert.False(t, cfg.RuntimeFallback.Enabled)
	assert.Equal(t, 300.0, cfg.RuntimeFallback.CooldownSeconds)
	assert.Equal(t, 60.0, cfg.RuntimeFallback.WindowSeconds)
	assert.Equal(t, []string{"config.runtimeFallback.cooldownSeconds must be a number of seconds between 0 and a week, got -1; using the default 300"}, warnings)
}
