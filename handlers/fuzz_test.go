package handlers_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/rs/zerolog"

	"github.com/hookwire/hookwire/handlers"
	"github.com/hookwire/hookwire/rpc"
)

// fuzzMethods are the methods FuzzHooks calls; the fuzzed byte picks one.
var fuzzMethods = []string{
	"tool.execute.before", "tool.execute.after", "chat.system.transform",
	"chat.messages.transform", "chat.message", "event",
	"delegate.resolveModel", "delegate.detectError", "sessions.list", "status",
}

// hookMethod reports whether method's result is {"patch": [...]}.
func hookMethod(method string) bool {
	switch method {
	case "tool.execute.before", "tool.execute.after", "chat.system.transform",
		"chat.messages.transform", "chat.message":
		return true
	}
	return false
}

// FuzzHooks sends arbitrary params to each method of an initialized server
// that already remembers a task session, and checks: no panic; an error is
// an *rpc.Error with -32602 and leaves the store as it was; a result
// marshals to JSON; a hook's patch applies, op by op, to the call's own
// output (every path points into it).
//
// Seeds: f.Add below and testdata/fuzz/FuzzHooks (the hook calls of the
// recorded OpenCode sessions in testdata/transcripts).
func FuzzHooks(f *testing.F) {
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
		if method == "event" && string(b) != "null" {
			t.Fatalf("event: result %s, want null", b)
		}
		if !hookMethod(method) {
			return
		}
		var res struct {
			Patch []struct {
				Op    string           `json:"op"`
				Path  *string          `json:"path"`
				Value *json.RawMessage `json:"value"`
			} `json:"patch"`
		}
		if err := json.Unmarshal(b, &res); err != nil || res.Patch == nil {
			t.Fatalf("%s: result %s is not {\"patch\":[...]}", method, b)
		}
		var p struct {
			Output json.RawMessage `json:"output"`
		}
		if err := json.Unmarshal(params, &p); err != nil {
			t.Fatalf("%s: params %q were accepted but encoding/json rejects them: %v", method, params, err)
		}
		doc, err := decodeAny(p.Output)
		if err != nil && len(res.Patch) > 0 {
			t.Fatalf("%s: patch %s for an output that is not JSON: %v", method, b, err)
		}
		for i, op := range res.Patch {
			if op.Path == nil {
				t.Fatalf("%s: op %d has no path: %s", method, i, b)
			}
			var value any
			if op.Value != nil {
				if value, err = decodeAny(*op.Value); err != nil {
					t.Fatalf("%s: op %d value: %v", method, i, err)
				}
			}
			next, err := applyOp(doc, op.Op, *op.Path, value, op.Value != nil)
			if err != nil {
				t.Fatalf("%s: op %d %s %q does not apply to the call's output: %v\nparams: %s\npatch: %s",
					method, i, op.Op, *op.Path, err, params, b)
			}
			doc = next
		}
	})
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
	list, _ := json.Marshal(st.List(""))
	snap, _ := st.Snapshot()
	return storeSnapshot{stats: st.Stats(), entries: string(list), state: snap}
}

func decodeAny(b []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	return v, nil
}

// applyOp applies one JSON Patch (RFC 6902) op to doc, strictly: add needs
// the parent container, replace and remove need the target.
func applyOp(doc any, op, path string, value any, hasValue bool) (any, error) {
	if path == "" {
		if op == "remove" {
			return nil, errors.New("remove of the whole document")
		}
		return value, nil
	}
	if !strings.HasPrefix(path, "/") {
		return nil, errors.New("path does not start with /")
	}
	tokens := strings.Split(path[1:], "/")
	for i, tok := range tokens {
		tokens[i] = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
	}
	if (op == "add" || op == "replace") && !hasValue {
		return nil, errors.New("no value")
	}
	if op == "remove" && hasValue {
		return nil, errors.New("remove with a value")
	}
	parent, err := parentOf(doc, tokens)
	if err != nil {
		return nil, err
	}
	last := tokens[len(tokens)-1]
	switch c := parent.(type) {
	case map[string]any:
		_, exists := c[last]
		switch op {
		case "add":
			c[last] = value
		case "replace":
			if !exists {
				return nil, fmt.Errorf("replace of missing member %q", last)
			}
			c[last] = value
		case "remove":
			if !exists {
				return nil, fmt.Errorf("remove of missing member %q", last)
			}
			delete(c, last)
		default:
			return nil, fmt.Errorf("op %q", op)
		}
		return doc, nil
	case []any:
		if op == "add" && last == "-" {
			return setIn(doc, tokens[:len(tokens)-1], append(c, value))
		}
		i, err := arrayIndex(last, len(c))
		if err != nil {
			return nil, err
		}
		switch op {
		case "add":
			if i > len(c) {
				return nil, fmt.Errorf("add at index %d of %d", i, len(c))
			}
			grown := append(append(append([]any{}, c[:i]...), value), c[i:]...)
			return setIn(doc, tokens[:len(tokens)-1], grown)
		case "replace":
			if i >= len(c) {
				return nil, fmt.Errorf("replace at index %d of %d", i, len(c))
			}
			c[i] = value
		case "remove":
			if i >= len(c) {
				return nil, fmt.Errorf("remove at index %d of %d", i, len(c))
			}
			return setIn(doc, tokens[:len(tokens)-1], append(append([]any{}, c[:i]...), c[i+1:]...))
		default:
			return nil, fmt.Errorf("op %q", op)
		}
		return doc, nil
	}
	return nil, fmt.Errorf("parent of %q is %T, not an object or array", path, parent)
}

// parentOf returns the container that holds the last of tokens.
func parentOf(doc any, tokens []string) (any, error) {
	parent := doc
	for _, tok := range tokens[:len(tokens)-1] {
		next, err := child(parent, tok)
		if err != nil {
			return nil, err
		}
		parent = next
	}
	return parent, nil
}

func child(v any, tok string) (any, error) {
	switch c := v.(type) {
	case map[string]any:
		next, ok := c[tok]
		if !ok {
			return nil, fmt.Errorf("no member %q", tok)
		}
		return next, nil
	case []any:
		i, err := arrayIndex(tok, len(c))
		if err != nil {
			return nil, err
		}
		if i >= len(c) {
			return nil, fmt.Errorf("index %d of %d", i, len(c))
		}
		return c[i], nil
	}
	return nil, fmt.Errorf("%q into %T", tok, v)
}

func arrayIndex(tok string, n int) (int, error) {
	if tok == "" || (len(tok) > 1 && tok[0] == '0') {
		return 0, fmt.Errorf("bad array index %q", tok)
	}
	i, err := strconv.Atoi(tok)
	if err != nil || i < 0 {
		return 0, fmt.Errorf("bad array index %q", tok)
	}
	return i, nil
}

// setIn replaces the container at tokens (an array that was resized).
func setIn(doc any, tokens []string, v any) (any, error) {
	if len(tokens) == 0 {
		return v, nil
	}
	parent, err := parentOf(doc, tokens)
	if err != nil {
		return nil, err
	}
	last := tokens[len(tokens)-1]
	switch c := parent.(type) {
	case map[string]any:
		c[last] = v
	case []any:
		i, err := arrayIndex(last, len(c))
		if err != nil {
			return nil, err
		}
		c[i] = v
	}
	return doc, nil
}

// hookSeeds are params by method: real OpenCode 1.18.33 payloads (trimmed)
// and the edges the handlers must survive.
var hookSeeds = map[string][]string{
	"tool.execute.before": {
		`{"input":{"tool":"task","sessionID":"ses_parent","callID":"call_9"},"output":{"args":{"subagent_type":"explorer","description":"again","prompt":"p","task_id":"exp-1"}}}`,
		`{"input":{"tool":"task","sessionID":"ses_parent","callID":"call_9"},"output":{"args":{"subagent_type":"explorer","description":"again","prompt":"p","task_id":"nope-7"}}}`,
		`{"input":{"tool":"task","sessionID":"ses_parent","callID":"call_9"},"output":{"args":{"subagent_type":"explorer","task_id":" ses_child1 "}}}`,
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
// showed it.

// Cache-stable mode once added /messages/0/parts/- to a user message with
// no parts array.
func TestRegressionAddPartWithoutParts(t *testing.T) {
	srv := primedServer(t, true)
	for _, msg := range []string{`{"info":{"id":"m1","role":"user","sessionID":"ses_parent"}}`,
		`{"info":{"id":"m2","role":"user","sessionID":"ses_parent"},"parts":null}`} {
		params := `{"input":{},"output":{"messages":[` + msg + `]}}`
		checkPatchApplies(t, srv, "chat.messages.transform", params)
	}
}

// chat.system.transform once added /system/- when output.system was absent
// or null.
func TestRegressionAddSystemWithoutArray(t *testing.T) {
	srv := primedServer(t, false)
	for _, params := range []string{`{"input":{"sessionID":"ses_parent"},"output":{}}`,
		`{"input":{"sessionID":"ses_parent"},"output":{"system":null}}`} {
		checkPatchApplies(t, srv, "chat.system.transform", params)
	}
}

// encoding/json once read {"Args":...} as args, so the patch named a path
// the output does not have.
func TestRegressionCaseInsensitiveMembers(t *testing.T) {
	srv := primedServer(t, false)
	checkPatchApplies(t, srv, "tool.execute.before",
		`{"input":{"tool":"task","sessionID":"ses_parent","callID":"c9"},"output":{"Args":{"subagent_type":"explorer","task_id":"exp-1"}}}`)
	checkPatchApplies(t, srv, "tool.execute.after",
		`{"input":{"tool":"task","sessionID":"ses_parent","callID":"c8"},"output":{"OUTPUT":"[ERROR] Unknown agent: x. Available agents: explorer"}}`)
}

// checkPatchApplies dispatches one call and fails unless its patch applies
// to the call's output.
func checkPatchApplies(t *testing.T, srv *handlers.Server, method, params string) {
	t.Helper()
	result, err := srv.Dispatch(context.Background(), rpc.Request{Method: method, Params: json.RawMessage(params)})
	if err != nil {
		t.Fatalf("%s: %v", method, err)
	}
	b, _ := json.Marshal(result)
	var res struct {
		Patch []struct {
			Op    string          `json:"op"`
			Path  string          `json:"path"`
			Value json.RawMessage `json:"value"`
		} `json:"patch"`
	}
	if err := json.Unmarshal(b, &res); err != nil {
		t.Fatal(err)
	}
	var p struct {
		Output json.RawMessage `json:"output"`
	}
	if err := json.Unmarshal([]byte(params), &p); err != nil {
		t.Fatal(err)
	}
	doc, _ := decodeAny(p.Output)
	for _, op := range res.Patch {
		var value any
		if op.Value != nil {
			value, _ = decodeAny(op.Value)
		}
		if doc, err = applyOp(doc, op.Op, op.Path, value, op.Value != nil); err != nil {
			t.Errorf("%s: %s %s does not apply to %s: %v", method, op.Op, op.Path, params, err)
			return
		}
	}
}
