package handlers_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	jsonpatch "github.com/evanphx/json-patch/v5"
	"github.com/rs/zerolog"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hookwire/hookwire/handlers"
	"github.com/hookwire/hookwire/rpc"
)

// Runtime model fallback (PROTOCOL.md 4.7, 4.8) as the client sees it:
// what model.failed tells it to do, and what a chat.message's patch does
// to the message OpenCode sends, applied as OpenCode's plugin applies it
// (RFC 6902, strictly). Only the server's public calls are used.

type fallbackSidecar struct {
	t   *testing.T
	s   *handlers.Server
	now time.Time
}

// newFallbackSidecar is an initialized server with config, on the providers of the
// e2e (fake/fake-model, the default, fake-model-2 and fake-model-3), with
// a clock the test moves.
func newFallbackSidecar(t *testing.T, config map[string]any) *fallbackSidecar {
	sc := &fallbackSidecar{t: t, now: time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)}
	sc.s = handlers.New(handlers.Options{Version: "test", Log: zerolog.Nop(), Now: func() time.Time { return sc.now }})
	sc.dispatch("initialize", map[string]any{"protocolVersion": 1, "config": config})
	sc.notify("providers.update", map[string]any{"connectedProviders": []string{"fake"},
		"availableModels": []string{"fake/fake-model", "fake/fake-model-2", "fake/fake-model-3"}, "defaultModel": "fake/fake-model"})
	return sc
}

func (sc *fallbackSidecar) params(v any) json.RawMessage {
	b, err := json.Marshal(v)
	require.NoError(sc.t, err)
	return b
}

func (sc *fallbackSidecar) dispatch(method string, params any) json.RawMessage {
	sc.t.Helper()
	res, err := sc.s.Dispatch(context.Background(), rpc.Request{Method: method, Params: sc.params(params)})
	require.NoError(sc.t, err, method)
	return sc.params(res)
}

func (sc *fallbackSidecar) notify(method string, params any) {
	sc.t.Helper()
	_, err := sc.s.Dispatch(context.Background(), rpc.Request{Method: method, Params: sc.params(params), Notification: true})
	require.NoError(sc.t, err, method)
}

// chatMessage sends chat.message for session with output (OpenCode's
// message and parts) and returns output as the patch leaves it.
func (sc *fallbackSidecar) chatMessage(session, agent string, inputModel string, output map[string]any) map[string]any {
	sc.t.Helper()
	input := map[string]any{"sessionID": session, "agent": agent}
	if inputModel != "" {
		input["model"] = map[string]any{"providerID": "fake", "modelID": inputModel}
	}
	res := sc.dispatch("chat.message", map[string]any{"input": input, "output": output})
	var r struct {
		Patch json.RawMessage `json:"patch"`
	}
	require.NoError(sc.t, json.Unmarshal(res, &r))
	doc := sc.params(output)
	if len(r.Patch) > 0 && string(r.Patch) != "[]" && string(r.Patch) != "null" {
		p, err := jsonpatch.DecodePatch(r.Patch)
		require.NoError(sc.t, err)
		opts := jsonpatch.NewApplyOptions()
		opts.EnsurePathExistsOnAdd = false
		opts.AllowMissingPathOnRemove = false
		doc, err = p.ApplyWithOptions(doc, opts)
		require.NoError(sc.t, err, "the patch %s applies to %s", r.Patch, sc.params(output))
	}
	var out map[string]any
	require.NoError(sc.t, json.Unmarshal(doc, &out))
	return out
}

// message is OpenCode's chat.message output: a user message on model
// ("" for a message without a model member).
func userMessage(session, agent, model string) map[string]any {
	m := map[string]any{"id": "msg_1", "role": "user", "sessionID": session, "agent": agent}
	if model != "" {
		m["model"] = map[string]any{"providerID": "fake", "modelID": model}
	}
	return map[string]any{"message": m, "parts": []any{}}
}

// messageModelOf is the model a patched chat.message output sends the message on.
func messageModelOf(t *testing.T, out map[string]any) string {
	m, _ := out["message"].(map[string]any)
	model, ok := m["model"].(map[string]any)
	require.True(t, ok, "the message has a model: %v", out)
	return model["providerID"].(string) + "/" + model["modelID"].(string)
}

// child makes session a subagent of parent (session.created), running
// agent on model.
func (sc *fallbackSidecar) child(parent, session, agent, model string) {
	sc.t.Helper()
	sc.notify("event", map[string]any{"input": map[string]any{"event": map[string]any{"type": "session.created",
		"properties": map[string]any{"sessionID": session, "info": map[string]any{"id": session, "parentID": parent, "agent": agent}}}}})
	assert.Equal(sc.t, "fake/"+model, messageModelOf(sc.t, sc.chatMessage(session, agent, model, userMessage(session, agent, model))))
}

type failedAnswer struct {
	Counted  bool   `json:"counted"`
	Model    string `json:"model"`
	Action   string `json:"action"`
	Fallback *struct {
		ProviderID string `json:"providerID"`
		ModelID    string `json:"modelID"`
	} `json:"fallback"`
}

func (f failedAnswer) to() string {
	if f.Fallback == nil {
		return ""
	}
	return f.Fallback.ProviderID + "/" + f.Fallback.ModelID
}

// rateLimited is model.failed for session's 429, on model ("": the
// session's own).
func (sc *fallbackSidecar) rateLimited(session, model string) failedAnswer {
	sc.t.Helper()
	p := map[string]any{"sessionID": session, "error": map[string]any{"statusCode": 429, "message": "Rate limit reached"}}
	if model != "" {
		p["model"] = map[string]any{"providerID": "fake", "modelID": model}
	}
	var f failedAnswer
	require.NoError(sc.t, json.Unmarshal(sc.dispatch("model.failed", p), &f))
	return f
}

var explorerFallbackConfig = map[string]any{"agentModels": map[string]any{"explorer": map[string]any{"fallbackModels": []string{"fake/fake-model-2"}}}}

// Two children of one parent on one model hit the same rate limit: each is
// rescued on the fallback; only the same child reporting its failure
// again (OpenCode's retries, its events) gets nothing more.
func TestEachChildOnACoolingModelIsRescued(t *testing.T) {
	sc := newFallbackSidecar(t, explorerFallbackConfig)
	sc.chatMessage("ses_p", "orchestrator", "fake-model", userMessage("ses_p", "orchestrator", "fake-model"))
	sc.child("ses_p", "ses_c1", "explorer", "fake-model-3")
	sc.child("ses_p", "ses_c2", "explorer", "fake-model-3")

	first := sc.rateLimited("ses_c1", "")
	assert.Equal(t, "abort", first.Action)
	assert.Equal(t, "fake/fake-model-2", first.to())

	sc.now = sc.now.Add(time.Second)
	second := sc.rateLimited("ses_c2", "")
	assert.Equal(t, "fake/fake-model-3", second.Model)
	assert.Equal(t, "abort", second.Action, "the second child is rescued too")
	assert.Equal(t, "fake/fake-model-2", second.to())

	sc.now = sc.now.Add(time.Second)
	again := sc.rateLimited("ses_c1", "fake-model-3")
	assert.Equal(t, "none", again.Action, "the first child's failure reported again")
	assert.Equal(t, "", again.to())
}

// A session moved off a cooling model runs on its fallback from then on:
// its own next failure is the fallback's, and a child rescued on its
// parent's model gets the model the parent runs on, not the cooling one.
func TestSwitchedSessionRunsOnItsFallback(t *testing.T) {
	cfg := map[string]any{"agentModels": map[string]any{"orchestrator": map[string]any{"fallbackModels": []string{"fake/fake-model-2"}}}}
	sc := newFallbackSidecar(t, cfg)
	sc.chatMessage("ses_u", "orchestrator", "fake-model", userMessage("ses_u", "orchestrator", "fake-model"))
	require.Equal(t, "resend", sc.rateLimited("ses_u", "fake-model").Action) // fake/fake-model cools now

	sc.now = sc.now.Add(time.Minute)
	out := sc.chatMessage("ses_p", "orchestrator", "fake-model", userMessage("ses_p", "orchestrator", "fake-model"))
	require.Equal(t, "fake/fake-model-2", messageModelOf(t, out), "moved off the cooling model")

	sc.child("ses_p", "ses_c", "oracle", "fake-model-3") // no agentModels entry: the parent's model is its fallback
	res := sc.rateLimited("ses_c", "")
	assert.Equal(t, "abort", res.Action)
	assert.Equal(t, "fake/fake-model-2", res.to(), "the model the parent runs on")

	sc.now = sc.now.Add(time.Minute)
	own := sc.rateLimited("ses_p", "")
	assert.Equal(t, "fake/fake-model-2", own.Model, "the parent's failure is its running model's")
}

// A message OpenCode sends without a model member (the session's model is
// in the input) is moved off a cooling model all the same: the patch
// gives it the fallback.
func TestMessageWithoutModelMovedOffCoolingModel(t *testing.T) {
	sc := newFallbackSidecar(t, explorerFallbackConfig)
	sc.chatMessage("ses_p", "orchestrator", "fake-model", userMessage("ses_p", "orchestrator", "fake-model"))
	sc.child("ses_p", "ses_c1", "explorer", "fake-model-3")
	sc.rateLimited("ses_c1", "")

	sc.now = sc.now.Add(time.Minute)
	sc.notify("event", map[string]any{"input": map[string]any{"event": map[string]any{"type": "session.created",
		"properties": map[string]any{"sessionID": "ses_c2", "info": map[string]any{"id": "ses_c2", "parentID": "ses_p", "agent": "explorer"}}}}})
	out := sc.chatMessage("ses_c2", "explorer", "fake-model-3", userMessage("ses_c2", "explorer", ""))
	assert.Equal(t, "fake/fake-model-2", messageModelOf(t, out))
	// With a model member, the same.
	sc.notify("event", map[string]any{"input": map[string]any{"event": map[string]any{"type": "session.created",
		"properties": map[string]any{"sessionID": "ses_c3", "info": map[string]any{"id": "ses_c3", "parentID": "ses_p", "agent": "explorer"}}}}})
	out = sc.chatMessage("ses_c3", "explorer", "fake-model-3", userMessage("ses_c3", "explorer", "fake-model-3"))
	assert.Equal(t, "fake/fake-model-2", messageModelOf(t, out))
}
