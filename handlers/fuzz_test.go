package handlers_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"testing"

	jsonpatch "github.com/evanphx/json-patch/v5"
	"github.com/rs/zerolog"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hookwire/hookwire/core"
	"github.com/hookwire/hookwire/handlers"
	"github.com/hookwire/hookwire/rpc"
	"github.com/hookwire/hookwire/sessions"
)

// announced returns the hooks and methods a fresh server announces in
// initialize's capabilities: the methods FuzzHooks calls, in that order
// (the seed corpus picks a method by its index).
func announced(t testing.TB) (hooks, methods []string) {
	t.Helper()
	srv := handlers.New(handlers.Options{Version: "fuzz", Log: zerolog.Nop()})
	res, err := srv.Dispatch(context.Background(), rpc.Request{Method: "initialize", Params: json.RawMessage(`{"protocolVersion":1}`)})
	if err != nil {
		t.Fatalf("initialize: %v", err)
	}
	b, _ := json.Marshal(res)
	var r struct {
		Capabilities struct {
			Hooks   []string `json:"hooks"`
			Methods []string `json:"methods"`
		} `json:"capabilities"`
	}
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatalf("initialize result %s: %v", b, err)
	}
	return r.Capabilities.Hooks, r.Capabilities.Methods
}

// FuzzHooks sends arbitrary params to each hook and method of an
// initialized server that already remembers a task session, and checks:
// no panic; an error is an *rpc.Error with -32602 and leaves the store as
// it was; a result marshals to JSON; a hook's patch is well formed and
// applies (RFC 6902, strictly) to the call's own output (every path points
// into it).
//
// Seeds: f.Add below and testdata/fuzz/FuzzHooks (the hook calls of the
// recorded OpenCode sessions in testdata/transcripts).
func FuzzHooks(f *testing.F) {
	hooks, methods := announced(f)
	fuzzMethods := append(slices.Clone(hooks), methods...)
	for i, m := range fuzzMethods {
		for _, params := range hookSeeds[m] {
			f.Add(uint8(i), false, []byte(params))
			f.Add(uint8(i), true, []byte(params))
		}
	}
	f.Fuzz(func(t *testing.T, which uint8, cacheStable bool, params []byte) {
		method := fuzzMethods[int(which)%len(fuzzMethods)]
		srv := primedServer(t, cacheStable)
		before := storeState(srv)

		result, err := srv.Dispatch(context.Background(), rpc.Request{Method: method, Params: json.RawMessage(params)})
		if err != nil {
			var rerr *rpc.Error
			if !errors.As(err, &rerr) {
				t.Fatalf("%s: error %v (%T) is not an *rpc.Error: it would be sent as -32603", method, err, err)
			}
			if rerr.Code != rpc.CodeInvalidParams {
				t.Fatalf("%s: error code %d (%q), want -32602 for bad params", method, rerr.Code, rerr.Message)
			}
			if rerr.Message == "" {
				t.Fatalf("%s: error without a message", method)
			}
			if after := storeState(srv); !reflect.DeepEqual(before, after) {
				t.Fatalf("%s: bad params changed the store:\nbefore %+v\nafter  %+v", method, before, after)
			}
			return
		}
		b, err := json.Marshal(result)
		if err != nil {
			t.Fatalf("%s: result %#v does not marshal: %v", method, result, err)
		}
		if !json.Valid(b) {
			t.Fatalf("%s: result marshals to invalid JSON %q", method, b)
		}
		if method == "event" {
			// The one hook whose result is null rather than a patch.
			if string(b) != "null" {
				t.Fatalf("event: result %s, want null", b)
			}
			return
		}
		if !slices.Contains(hooks, method) {
			return
		}
		var p struct {
			Output json.RawMessage `json:"output"`
		}
		if err := json.Unmarshal(params, &p); err != nil {
			t.Fatalf("%s: params %q were accepted but encoding/json rejects them: %v", method, params, err)
		}
		if _, err := applyPatch(b, p.Output); err != nil {
			t.Fatalf("%s: %v\nparams: %s\nresult: %s", method, err, params, b)
		}
	})
}

// applyPatch checks that result is {"patch":[...]} whose ops are add,
// replace or remove, each with a path, a value exactly when the op takes
// one, and applies the patch to doc with evanphx/json-patch, strictly:
// add needs the parent container, replace and remove need the target, no
// negative indices. It returns the patched document (doc itself for an
// empty patch, which needs no JSON to apply to).
func applyPatch(result, doc []byte) ([]byte, error) {
	var res struct {
		Patch json.RawMessage `json:"patch"`
	}
	if err := json.Unmarshal(result, &res); err != nil || len(res.Patch) == 0 || res.Patch[0] != '[' {
		return nil, fmt.Errorf("result %s is not {\"patch\":[...]}", result)
	}
	var ops []map[string]json.RawMessage
	if err := json.Unmarshal(res.Patch, &ops); err != nil {
		return nil, fmt.Errorf("patch %s: %v", res.Patch, err)
	}
	if len(ops) == 0 {
		return doc, nil
	}
	for i, op := range ops {
		var kind string
		_ = json.Unmarshal(op["op"], &kind)
		_, hasValue := op["value"]
		switch {
		case op["path"] == nil:
			return nil, fmt.Errorf("op %d has no path", i)
		case kind != "add" && kind != "replace" && kind != "remove":
			return nil, fmt.Errorf("op %d is %q: PROTOCOL.md 3 allows add, replace and remove", i, kind)
		case kind != "remove" && !hasValue:
			return nil, fmt.Errorf("op %d (%s) has no value", i, kind)
		case kind == "remove" && hasValue:
			return nil, fmt.Errorf("op %d is a remove with a value", i)
		}
	}
	patch, err := jsonpatch.DecodePatch(res.Patch)
	if err != nil {
		return nil, fmt.Errorf("patch %s does not decode: %v", res.Patch, err)
	}
	opts := jsonpatch.NewApplyOptions()
	opts.SupportNegativeIndices = false
	opts.AllowMissingPathOnRemove = false
	opts.EnsurePathExistsOnAdd = false
	out, err := patch.ApplyWithOptions(doc, opts)
	if err != nil {
		return nil, fmt.Errorf("patch %s does not apply to the call's output %s: %v", res.Patch, doc, err)
	}
	return out, nil
}

// primedServer is an initialized server where ses_parent is an
// orchestrator with one remembered explorer task (exp-1 → ses_child1) and
// one pending call.
func primedServer(t *testing.T, cacheStable bool) *handlers.Server {
	t.Helper()
	srv := handlers.New(handlers.Options{Version: "fuzz", Log: zerolog.Nop()})
	calls := []struct{ method, params string }{
		{"initialize", fmt.Sprintf(`{"protocolVersion":1,"config":{"cacheStable":%t,"subagents":["explorer","oracle"]}}`, cacheStable)},
		{"chat.message", `{"input":{"sessionID":"ses_parent","agent":"orchestrator"},"output":{"message":{},"parts":[]}}`},
		{"tool.execute.before", `{"input":{"tool":"task","sessionID":"ses_parent","callID":"call_1"},"output":{"args":{"subagent_type":"explorer","description":"Explore the repo","prompt":"look"}}}`},
		{"tool.execute.after", `{"input":{"tool":"task","sessionID":"ses_parent","callID":"call_1"},"output":{"title":"t","output":"<task id=\"ses_child1\" state=\"completed\">\ndone\n</task>","metadata":{}}}`},
		{"tool.execute.before", `{"input":{"tool":"task","sessionID":"ses_parent","callID":"call_2"},"output":{"args":{"subagent_type":"oracle","description":"Ask","prompt":"why"}}}`},
	}
	for _, c := range calls {
		if _, err := srv.Dispatch(context.Background(), rpc.Request{Method: c.method, Params: json.RawMessage(c.params)}); err != nil {
			t.Fatalf("priming %s: %v", c.method, err)
		}
	}
	return srv
}

type storeSnapshot struct {
	stats   any
	entries string
	state   []byte
}

// storeState is what a call may change: the store's sizes, its entries
// and its persisted form.
func storeState(srv *handlers.Server) storeSnapshot {
	st := srv.Store()
	list, _ := json.Marshal(st.Tasks().List(""))
	snap, _ := st.(*sessions.Store).Snapshot()
	return storeSnapshot{stats: st.Stats(), entries: string(list), state: snap}
}

// hookSeeds are params by method: real OpenCode 1.18.33 payloads (trimmed)
// and the edges the handlers must survive.
var hookSeeds = map[string][]string{
	"tool.execute.before": {
		`{"input":{"tool":"task","sessionID":"ses_parent","callID":"call_9"},"output":{"args":{"subagent_type":"explorer","description":"again","prompt":"p","task_id":"exp-1"}}}`,
		`{"input":{"tool":"task","sessionID":"ses_parent","callID":"call_9"},"output":{"args":{"subagent_type":"explorer","description":"again","prompt":"p","task_id":"nope-7"}}}`,
		`{"input":{"tool":"task","sessionID":"ses_parent","callID":"call_9"},"output":{"args":{"subagent_type":"explorer","task_id":" ses_child1 "}}}`,
		`{"input":{"tool":"task","sessionID":"ses_parent"},"output":{"args":{"subagent_type":"explorer","task_id":"exp-1"}}}`,
		`{"input":{"tool":"task","sessionID":"ses_parent","callID":""},"output":{"args":{"subagent_type":"explorer","task_id":"nope-7"}}}`,
		`{"input":{"tool":"Task","sessionID":"ses_parent","callID":"c"},"output":{"args":{"subagent_type":"explorer","task_id":7}}}`,
		`{"input":{"tool":"task","sessionID":"ses_parent","callID":"c"},"output":{"args":null}}`,
		`{"input":{"tool":7},"output":{"args":{}}}`,
		`{"output":{"args":{}}}`,
		`[]`, `null`, `{}`,
	},
	"tool.execute.after": {
		`{"input":{"tool":"task","sessionID":"ses_parent","callID":"call_2"},"output":{"title":"t","output":"task_id: ses_oracle1 (for resuming)\nok","metadata":{}}}`,
		`{"input":{"tool":"task","sessionID":"ses_parent","callID":"call_2"},"output":{"output":"[ERROR] Unknown agent: \"explorr\". Available agents: explorer, oracle"}}`,
		`{"input":{"tool":"task","sessionID":"ses_parent","callID":"x"},"output":{"output":"Invalid arguments: run_in_background is required"}}`,
		`{"input":{"tool":"task","sessionID":"ses_parent","callID":"call_2"},"output":{"output":{"not":"a string"}}}`,
		`{"input":{"tool":"task","callID":"call_2"},"output":{"output":"[error] session not found"}}`,
		`{"input":{"tool":"task"},"output":{"output":"x"}}`,
	},
	"chat.system.transform": {
		`{"input":{"sessionID":"ses_parent","model":{"providerID":"fake"}},"output":{"system":["You are the orchestrator."]}}`,
		`{"input":{"sessionID":"ses_parent"},"output":{"system":[]}}`,
		`{"input":{"sessionID":"ses_other"},"output":{"system":[1,null,{}]}}`,
		`{"input":{},"output":{}}`,
	},
	"chat.messages.transform": {
		`{"input":{},"output":{"messages":[{"info":{"id":"msg_1","role":"user","agent":"orchestrator","sessionID":"ses_parent"},"parts":[{"type":"text","text":"hello"}]},{"info":{"id":"msg_2","role":"assistant","sessionID":"ses_parent"},"parts":[{"type":"tool","tool":"task","state":{"status":"error","error":"Unknown agent type: explorr is not a valid agent type"}}]},{"info":{"id":"msg_3","role":"user","sessionID":"ses_parent"},"parts":[{"type":"text","text":"go on"}]}]}}`,
		`{"input":{},"output":{"messages":[{"info":{"id":"m","role":"user","sessionID":"ses_new","agent":"orchestrator"},"parts":[{"type":"text","text":"<!-- SLIM_INTERNAL_INITIATOR -->"}]}]}}`,
		`{"input":{},"output":{"messages":[{"info":{"role":"user"},"parts":[{"type":"file"}]}, null, {"parts":null}]}}`,
		`{"input":{},"output":{"messages":[{"info":{"role":"user","agent":7},"parts":[{"type":"text","text":"x"}]}]}}`,
		`{"input":{},"output":{"messages":{}}}`,
		`{"input":{}}`,
	},
	"chat.message": {
		`{"input":{"sessionID":"ses_parent","agent":"orchestrator","model":{"providerID":"fake","modelID":"fake-model"}},"output":{"message":{"id":"msg_1","role":"user","agent":"orchestrator"},"parts":[{"type":"text","text":"hi"}]}}`,
		`{"input":{"sessionID":"ses_x"},"output":{"message":{"agent":"explorer"}}}`,
		`{"input":{"sessionID":"ses_x","agent":["a"]}}`,
	},
	"event": {
		`{"input":{"event":{"type":"session.deleted","properties":{"sessionID":"ses_parent","info":{"id":"ses_parent"}}}}}`,
		`{"input":{"event":{"type":"session.deleted","properties":{"info":{"id":"ses_child1"}}}}}`,
		`{"input":{"event":{"type":"session.deleted","properties":{"sessionID":42}}}}`,
		`{"input":{"event":{"type":"session.updated","properties":{}}}}`,
		`{"input":{}}`,
	},
	"delegate.resolveModel": {
		`{"input":{"userModel":"quotio/claude-haiku-4-5-unavailable","userFallbackModels":["openai/gpt-5.4 high"],"availableModels":["openai/gpt-5.4-preview"]},"deps":{"connectedProviders":null}}`,
		`{"input":{"availableModels":[],"categoryDefaultModel":"openai/gpt-5.4"},"deps":{"connectedProviders":["openai"],"hasProviderModelsCache":true}}`,
		`{"input":{"fallbackChain":[{"providers":["vercel"],"model":"claude-opus-4-6","variant":"max"}],"availableModels":[]},"deps":{"connectedProviders":["vercel"]}}`,
		`{"input":null}`,
	},
	"delegate.detectError": {
		`{"output":"[ERROR] Unknown category: \"quick\". Available categories: deep, visual"}`,
		`{"output":"Expected a string starting with \"ses\"","failed":true}`,
		`{"output":7}`,
	},
	"sessions.list": {`{}`, `{"sessionID":"ses_parent"}`, `null`, `{"sessionID":1}`},
	"status":        {`null`, `{}`},
}

// Regression tests: bugs the fuzzer found, each as the smallest call that
// showed it, with the patch it must get now and the output that patch
// makes.

// primedBlock is the Resumable Sessions block of primedServer's parent.
const primedBlock = "### Resumable Sessions\nPass an alias below as task_id only to continue that same thread of work; " +
	"for anything new, leave task_id out to start a fresh task.\n\n- explorer: exp-1 Explore the repo"

// Cache-stable mode once added /messages/0/parts/- to a user message with
// no parts array. Such a message gets nothing; one with a text part gets
// the block and the reminder.
func TestRegressionAddPartWithoutParts(t *testing.T) {
	srv := primedServer(t, true)
	synthetic := func(text string) string {
		b, _ := json.Marshal(map[string]any{"type": "text", "text": text, "synthetic": true})
		return string(b)
	}
	rows := []struct{ name, msg, wantPatch, wantOutput string }{
		{"no parts member",
			`{"info":{"id":"m1","role":"user","sessionID":"ses_parent"}}`,
			`[]`,
			`{"messages":[{"info":{"id":"m1","role":"user","sessionID":"ses_parent"}}]}`},
		{"parts null",
			`{"info":{"id":"m2","role":"user","sessionID":"ses_parent"},"parts":null}`,
			`[]`,
			`{"messages":[{"info":{"id":"m2","role":"user","sessionID":"ses_parent"},"parts":null}]}`},
		{"control: a text part gets the block and the reminder",
			`{"info":{"id":"m3","role":"user","sessionID":"ses_parent"},"parts":[{"type":"text","text":"hi"}]}`,
			`[{"op":"add","path":"/messages/0/parts/-","value":` + synthetic(primedBlock) + `},` +
				`{"op":"add","path":"/messages/0/parts/-","value":` + synthetic(core.DefaultPhaseReminder) + `}]`,
			`{"messages":[{"info":{"id":"m3","role":"user","sessionID":"ses_parent"},"parts":[{"type":"text","text":"hi"},` +
				synthetic(primedBlock) + `,` + synthetic(core.DefaultPhaseReminder) + `]}]}`},
	}
	for _, row := range rows {
		t.Run(row.name, func(t *testing.T) {
			checkPatch(t, srv, "chat.messages.transform", `{"input":{},"output":{"messages":[`+row.msg+`]}}`,
				row.wantPatch, row.wantOutput)
		})
	}
}

// chat.system.transform once added /system/- when output.system was absent
// or null; it now adds /system as a list holding the block.
func TestRegressionAddSystemWithoutArray(t *testing.T) {
	srv := primedServer(t, false)
	block, _ := json.Marshal(primedBlock)
	list := `[` + string(block) + `]`
	rows := []struct{ name, output, wantPatch, wantOutput string }{
		{"system absent", `{}`, `[{"op":"add","path":"/system","value":` + list + `}]`, `{"system":` + list + `}`},
		{"system null", `{"system":null}`, `[{"op":"add","path":"/system","value":` + list + `}]`, `{"system":` + list + `}`},
		{"control: system a list", `{"system":["x"]}`, `[{"op":"add","path":"/system/-","value":` + string(block) + `}]`,
			`{"system":["x",` + string(block) + `]}`},
	}
	for _, row := range rows {
		t.Run(row.name, func(t *testing.T) {
			checkPatch(t, srv, "chat.system.transform", `{"input":{"sessionID":"ses_parent"},"output":`+row.output+`}`,
				row.wantPatch, row.wantOutput)
		})
	}
}

// encoding/json once read {"Args":...} as args, so the patch named a path
// the output does not have. Member names now match exactly: a wrongly
// cased member is not read, and nothing is patched.
func TestRegressionCaseInsensitiveMembers(t *testing.T) {
	srv := primedServer(t, false)
	rows := []struct{ name, method, params, wantPatch, wantOutput string }{
		{"Args is not args", "tool.execute.before",
			`{"input":{"tool":"task","sessionID":"ses_parent","callID":"c9"},"output":{"Args":{"subagent_type":"explorer","task_id":"exp-1"}}}`,
			`[]`, `{"Args":{"subagent_type":"explorer","task_id":"exp-1"}}`},
		{"control: args resolves the alias", "tool.execute.before",
			`{"input":{"tool":"task","sessionID":"ses_parent","callID":"c10"},"output":{"args":{"subagent_type":"explorer","task_id":"exp-1"}}}`,
			`[{"op":"replace","path":"/args/task_id","value":"ses_child1"}]`,
			`{"args":{"subagent_type":"explorer","task_id":"ses_child1"}}`},
		{"OUTPUT is not output", "tool.execute.after",
			`{"input":{"tool":"task","sessionID":"ses_parent","callID":"c8"},"output":{"OUTPUT":"[ERROR] Unknown agent: x. Available agents: explorer"}}`,
			`[]`, `{"OUTPUT":"[ERROR] Unknown agent: x. Available agents: explorer"}`},
	}
	for _, row := range rows {
		t.Run(row.name, func(t *testing.T) {
			checkPatch(t, srv, row.method, row.params, row.wantPatch, row.wantOutput)
		})
	}
}

// checkPatch dispatches one call and checks its patch against wantPatch
// (JSON) and the call's output, once the patch is applied, against
// wantOutput (JSON).
func checkPatch(t *testing.T, srv *handlers.Server, method, params, wantPatch, wantOutput string) {
	t.Helper()
	result, err := srv.Dispatch(context.Background(), rpc.Request{Method: method, Params: json.RawMessage(params)})
	require.NoError(t, err, method)
	b, err := json.Marshal(result)
	require.NoError(t, err)
	var res struct {
		Patch json.RawMessage `json:"patch"`
	}
	require.NoError(t, json.Unmarshal(b, &res))
	assert.JSONEq(t, wantPatch, string(res.Patch), "%s: patch for %s", method, params)
	var p struct {
		Output json.RawMessage `json:"output"`
	}
	require.NoError(t, json.Unmarshal([]byte(params), &p))
	out, err := applyPatch(b, p.Output)
	require.NoError(t, err, "%s: %s", method, params)
	assert.JSONEq(t, wantOutput, string(out), "%s: output after the patch", method)
}
