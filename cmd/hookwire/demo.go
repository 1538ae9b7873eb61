package main

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/hookwire/hookwire/transcript"
)

// demo runs a scripted orchestrator session through the real server
// (in-process, over pipes, line framing) and prints what each hook did.
func demo(args []string, stdout, stderr io.Writer) int {
	if len(args) == 1 && (args[0] == "-h" || args[0] == "-help" || args[0] == "--help") {
		fmt.Fprintln(stdout, "usage: hookwire demo\n  run a scripted orchestrator session in process and show what each hook did")
		return 0
	}
	if len(args) > 0 {
		fmt.Fprintln(stderr, "hookwire demo takes no arguments")
		return 2
	}
	c, stop, err := startInProcess()
	if err != nil {
		fmt.Fprintln(stderr, "hookwire demo:", err)
		return 1
	}
	defer stop()
	d := &demoRun{c: c, w: stdout}
	if err := d.script(); err != nil {
		fmt.Fprintln(stderr, "hookwire demo:", err)
		return 1
	}
	return 0
}

// inProcessClient talks to a server running in this process.
type inProcessClient struct {
	c      *transcript.Client
	nextID int
}

func startInProcess() (*inProcessClient, func(), error) {
	c, err := transcript.Dial(transcript.InProcess(serveInProcess), "")
	if err != nil {
		return nil, nil, err
	}
	return &inProcessClient{c: c}, c.Close, nil
}

type rpcReply struct {
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int64  `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// call sends a request and decodes its result into out (if not nil).
func (c *inProcessClient) call(method string, params any, out any) error {
	c.nextID++
	msg, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": c.nextID, "method": method, "params": params})
	if err != nil {
		return err
	}
	if err := c.c.Send(msg); err != nil {
		return err
	}
	line, err := c.c.Next(5 * time.Second)
	if err != nil {
		return fmt.Errorf("%s: %w", method, err)
	}
	var r rpcReply
	if err := json.Unmarshal(line, &r); err != nil {
		return fmt.Errorf("%s: bad reply: %w", method, err)
	}
	if r.Error != nil {
		return fmt.Errorf("%s: error %d: %s", method, r.Error.Code, r.Error.Message)
	}
	if out != nil {
		return json.Unmarshal(r.Result, out)
	}
	return nil
}

type patchOp struct {
	Op    string          `json:"op"`
	Path  string          `json:"path"`
	Value json.RawMessage `json:"value"`
}

type patchReply struct {
	Patch []patchOp `json:"patch"`
}

type demoRun struct {
	c    *inProcessClient
	w    io.Writer
	step int
}

func (d *demoRun) title(format string, args ...any) {
	d.step++
	fmt.Fprintf(d.w, "\n%d. %s\n", d.step, fmt.Sprintf(format, args...))
}

func (d *demoRun) say(format string, args ...any) {
	fmt.Fprintf(d.w, "   %s\n", fmt.Sprintf(format, args...))
}

func (d *demoRun) block(text string) {
	for _, line := range strings.Split(text, "\n") {
		fmt.Fprintf(d.w, "   | %s\n", line)
	}
}

func (d *demoRun) hook(method string, input, output any) (patchReply, error) {
	var r patchReply
	err := d.c.call(method, map[string]any{"input": input, "output": output}, &r)
	return r, err
}

func valueString(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var part struct {
		Text string `json:"text"`
	}
	if json.Unmarshal(raw, &part) == nil && part.Text != "" {
		return part.Text
	}
	return string(raw)
}

const (
	demoParent = "ses_demo_orchestrator"
	demoChild  = "ses_demo_explorer_1"
)

func (d *demoRun) script() error {
	fmt.Fprintln(d.w, "hookwire demo: a scripted orchestrator session, sent through the real server over pipes.")

	var init struct {
		ServerInfo   struct{ Name, Version string } `json:"serverInfo"`
		Capabilities struct {
			Hooks []string `json:"hooks"`
		} `json:"capabilities"`
	}
	if err := d.c.call("initialize", map[string]any{"protocolVersion": 1,
		"clientInfo": map[string]any{"name": "hookwire-demo", "version": version},
		"config": map[string]any{"subagents": []string{"explorer", "oracle"}, "agentModels": map[string]any{
			"explorer": map[string]any{"fallbackChain": []any{
				map[string]any{"providers": []string{"anthropic"}, "model": "claude-sonnet-4-6"},
				map[string]any{"providers": []string{"github-copilot"}, "model": "claude-sonnet-4-6", "variant": "high"}}}}}}, &init); err != nil {
		return err
	}
	d.title("initialize")
	d.say("%s %s answers hooks: %s", init.ServerInfo.Name, init.ServerInfo.Version, strings.Join(init.Capabilities.Hooks, ", "))

	if _, err := d.hook("chat.message", map[string]any{"sessionID": demoParent, "agent": "orchestrator"},
		map[string]any{"message": map[string]any{"id": "msg_1", "role": "user"}, "parts": []any{}}); err != nil {
		return err
	}
	d.title("chat.message: the user talks to the orchestrator")
	d.say("session %s is now managed (agent orchestrator)", demoParent)

	first := map[string]any{"info": map[string]any{"id": "msg_1", "role": "user", "agent": "orchestrator", "sessionID": demoParent},
		"parts": []any{map[string]any{"type": "text", "text": "Explore the repo and fix the flaky test."}}}
	r, err := d.hook("chat.messages.transform", map[string]any{}, map[string]any{"messages": []any{first}})
	if err != nil {
		return err
	}
	d.title("chat.messages.transform: the orchestrator's first request (cache-stable, the default)")
	d.parts(r, nil)

	r, err = d.hook("tool.execute.before", map[string]any{"tool": "task", "sessionID": demoParent, "callID": "call_1"},
		map[string]any{"args": map[string]any{"description": "Map the repository layout", "prompt": "List the packages.", "subagent_type": "explorer"}})
	if err != nil {
		return err
	}
	d.title("tool.execute.before: task(subagent_type=explorer, \"Map the repository layout\")")
	d.say("pending call call_1 remembered; patch %s", describePatch(r, "args left as they are"))

	r, err = d.hook("tool.execute.after", map[string]any{"tool": "task", "sessionID": demoParent, "callID": "call_1"},
		map[string]any{"title": "Map the repository layout", "output": "<task id=\"" + demoChild + "\" state=\"completed\">\n<task_result>\nThree packages.\n</task_result>\n</task>", "metadata": map[string]any{}})
	if err != nil {
		return err
	}
	var list []struct{ Alias, TaskID, Label string }
	if err := d.c.call("sessions.list", map[string]any{"sessionID": demoParent}, &list); err != nil {
		return err
	}
	d.title("tool.execute.after: OpenCode 1.18 output <task id=\"%s\" ...>", demoChild)
	for _, e := range list {
		d.say("alias created: %s -> %s (%q)", e.Alias, e.TaskID, e.Label)
	}
	d.say("patch %s", describePatch(r, "the output reaches the LLM as it is"))

	reply := map[string]any{"info": map[string]any{"id": "msg_2", "role": "assistant", "sessionID": demoParent},
		"parts": []any{map[string]any{"type": "tool", "tool": "task", "state": map[string]any{"status": "completed", "output": "<task id=\"" + demoChild + "\" ...>"}}}}
	second := map[string]any{"info": map[string]any{"id": "msg_3", "role": "user", "agent": "orchestrator", "sessionID": demoParent},
		"parts": []any{map[string]any{"type": "text", "text": "Good. Now find the tests."}}}
	r, err = d.hook("chat.messages.transform", map[string]any{}, map[string]any{"messages": []any{first, reply, second}})
	if err != nil {
		return err
	}
	d.title("chat.messages.transform: the next request, with a new user message")
	d.parts(r, map[int]bool{0: true})
	r, err = d.hook("chat.system.transform", map[string]any{"sessionID": demoParent}, map[string]any{"system": []string{"You are the orchestrator."}})
	if err != nil {
		return err
	}
	d.say("chat.system.transform: patch %s", describePatch(r, "the system prompt is never touched"))
	d.say("so each request repeats the previous one byte for byte up to its new message: the prompt cache holds")

	r, err = d.hook("tool.execute.before", map[string]any{"tool": "task", "sessionID": demoParent, "callID": "call_2"},
		map[string]any{"args": map[string]any{"description": "Find the tests", "prompt": "Where are the tests?", "subagent_type": "explorer", "task_id": "exp-1"}})
	if err != nil {
		return err
	}
	d.title("tool.execute.before: task(subagent_type=explorer, task_id=\"exp-1\")")
	d.say("alias resolved: %s", describePatch(r, "args left as they are"))
	if _, err := d.hook("tool.execute.after", map[string]any{"tool": "task", "sessionID": demoParent, "callID": "call_2"},
		map[string]any{"output": "<task id=\"" + demoChild + "\" state=\"completed\">\n<task_result>\nIn ./testdata.\n</task_result>\n</task>"}); err != nil {
		return err
	}
	d.say("the resume returned the same session: exp-1 keeps pointing at it")

	history := []any{first, reply, second,
		map[string]any{"info": map[string]any{"id": "msg_4", "role": "assistant", "sessionID": demoParent},
			"parts": []any{map[string]any{"type": "tool", "tool": "task", "state": map[string]any{"status": "error",
				"error": "Unknown agent type: explorr is not a valid agent type"}}}},
	}
	r, err = d.hook("chat.messages.transform", map[string]any{}, map[string]any{"messages": history})
	if err != nil {
		return err
	}
	d.title("chat.messages.transform: a history whose native task call failed (Unknown agent type)")
	for _, op := range r.Patch {
		if strings.HasSuffix(op.Path, "/state/error") {
			d.say("native task error part gets guidance (%s):", op.Path)
			d.block(valueString(op.Value))
		}
	}
	d.parts(r, map[int]bool{0: true, 2: true})

	delegateErr := "[ERROR] Unknown category: \"fast\". Available categories: quick, deep, visual"
	r, err = d.hook("tool.execute.after", map[string]any{"tool": "task", "sessionID": demoParent, "callID": "call_3"},
		map[string]any{"output": delegateErr})
	if err != nil {
		return err
	}
	d.title("tool.execute.after: oh-my-opencode's delegate tool returned %q", delegateErr)
	for _, op := range r.Patch {
		d.say("%s %s: the old text, then", op.Op, op.Path)
		d.block(strings.TrimPrefix(valueString(op.Value), delegateErr+"\n"))
	}

	var model map[string]any
	sol := map[string]any{"providers": []string{"openai", "vercel"}, "model": "gpt-5.6-sol", "variant": "xhigh"}
	copilot := map[string]any{"providers": []string{"github-copilot"}, "model": "gpt-5.6-sol", "variant": "high"}
	if err := d.c.call("delegate.resolveModel", map[string]any{
		"input": map[string]any{"fallbackChain": []any{sol, copilot}, "availableModels": []string{"github-copilot/gpt-5.6-sol", "vercel/openai/gpt-5.6-sol"}},
		"deps":  map[string]any{"connectedProviders": nil, "hasProviderModelsCache": true, "hasConnectedProvidersCache": false},
	}, &model); err != nil {
		return err
	}
	d.title("delegate.resolveModel: the sol chain with copilot and vercel models available")
	d.say("model %v, variant %v, decided by rung %q", model["model"], model["variant"], model["rung"])

	if err := d.demoModelFallback(); err != nil {
		return err
	}

	if err := d.c.call("event", map[string]any{"input": map[string]any{"event": map[string]any{
		"type": "session.deleted", "properties": map[string]any{"info": map[string]any{"id": demoParent}}}}}, nil); err != nil {
		return err
	}
	if err := d.c.call("sessions.list", map[string]any{}, &list); err != nil {
		return err
	}
	d.title("event session.deleted for the orchestrator session")
	d.say("remembered entries left: %d", len(list))
	fmt.Fprintln(d.w)
	return nil
}

// demoModelFallback shows a model decision at chat.message (PROTOCOL.md
// 4.7): explorer is configured on a provider OpenCode has not connected.
func (d *demoRun) demoModelFallback() error {
	if err := d.c.call("providers.update", map[string]any{"connectedProviders": []string{"github-copilot", "openai"},
		"availableModels": []string{"github-copilot/claude-sonnet-4.6", "openai/gpt-5.4"}, "defaultModel": "openai/gpt-5.4"}, nil); err != nil {
		return err
	}
	r, err := d.hook("chat.message", map[string]any{"sessionID": demoChild, "agent": "explorer"},
		map[string]any{"message": map[string]any{"id": "msg_e1", "role": "user", "agent": "explorer",
			"model": map[string]any{"providerID": "anthropic", "modelID": "claude-sonnet-4-6"}}, "parts": []any{}})
	if err != nil {
		return err
	}
	var list []struct {
		Alias string
		Model struct{ Model, Variant, Rung string }
	}
	if err := d.c.call("sessions.list", map[string]any{"sessionID": demoParent}, &list); err != nil {
		return err
	}
	d.title("chat.message: explorer's session, on anthropic/claude-sonnet-4-6; OpenCode has connected only github-copilot and openai")
	d.say("patch %s", describePatch(r, "the model is left as it is"))
	for _, e := range list {
		d.say("%s runs on %s %s, decided by rung %q (agentModels.explorer's fallback chain)", e.Alias, e.Model.Model, e.Model.Variant, e.Model.Rung)
	}
	return nil
}

// parts shows the parts a chat.messages.transform patch adds. seen are
// the messages whose parts an earlier request already showed: they get the
// same bytes again, said in one line instead of shown.
func (d *demoRun) parts(r patchReply, seen map[int]bool) {
	again := map[int]bool{}
	added := 0
	for _, op := range r.Patch {
		rest, ok := strings.CutPrefix(op.Path, "/messages/")
		index, tail, _ := strings.Cut(rest, "/")
		i, err := strconv.Atoi(index)
		if !ok || err != nil || tail != "parts/-" {
			continue
		}
		added++
		if seen[i] {
			again[i] = true
			continue
		}
		text := valueString(op.Value)
		what := "a part"
		switch {
		case strings.HasPrefix(text, "### Resumable Sessions"):
			what = "the Resumable Sessions block, frozen on this message as it stands now"
		case strings.Contains(text, "<internal_reminder>"):
			what = "the phase reminder"
		}
		d.say("message %d gets %s, as a separate synthetic part (the user's own text untouched):", i, what)
		d.block(text)
	}
	for _, i := range slices.Sorted(maps.Keys(again)) {
		d.say("message %d gets the same parts as in the previous request, byte for byte", i)
	}
	if added == 0 {
		d.say("patch [] (nothing to add)")
	}
}

// describePatch names each op of r, or says what an empty patch leaves as it is.
func describePatch(r patchReply, unchanged string) string {
	if len(r.Patch) == 0 {
		return "[] (" + unchanged + ")"
	}
	var parts []string
	for _, op := range r.Patch {
		if op.Op == "remove" {
			parts = append(parts, fmt.Sprintf("remove %s", op.Path))
			continue
		}
		parts = append(parts, fmt.Sprintf("%s %s = %s", op.Op, op.Path, string(op.Value)))
	}
	return strings.Join(parts, "; ")
}
