package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/hookwire/hookwire/internal/textsafe"
	"github.com/hookwire/hookwire/transcript"
)

// demo plays a stock OpenCode session (build delegating to its explore
// and general subagents) through the real server, in process over pipes
// with a real state database in a temporary directory, and tells in plain
// words what a user gets: aliases, a rate-limited subagent finishing on
// its fallback, guidance on a failed call, a resume by alias from a later
// process, and `hookwire sessions`. No network, no OpenCode.
func demo(args []string, stdout, stderr io.Writer) int {
	if len(args) == 1 && (args[0] == "-h" || args[0] == "-help" || args[0] == "--help") {
		fmt.Fprintln(stdout, "usage: hookwire demo\n  play a stock OpenCode session (build, explore, general) through the sidecar in process and show what hookwire does")
		return 0
	}
	if len(args) > 0 {
		fmt.Fprintln(stderr, "hookwire demo takes no arguments")
		return 2
	}
	dir, err := os.MkdirTemp("", "hookwire-demo-")
	if err != nil {
		fmt.Fprintln(stderr, "hookwire demo:", err)
		return 1
	}
	defer os.RemoveAll(dir)
	d := &demoRun{w: stdout, state: filepath.Join(dir, "project.db")}
	if err := d.script(); err != nil {
		d.stop()
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

// startInProcess starts a server in this process on the state database
// at state ("" for none).
func startInProcess(state string) (*inProcessClient, func(), error) {
	c, err := transcript.Dial(transcript.InProcess(serveInProcess), state)
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
	c     *inProcessClient
	close func()
	w     io.Writer
	state string
	step  int
}

func (d *demoRun) title(format string, args ...any) {
	d.step++
	fmt.Fprintf(d.w, "\n%d. %s\n", d.step, textsafe.Line(fmt.Sprintf(format, args...)))
}

func (d *demoRun) say(format string, args ...any) {
	fmt.Fprintf(d.w, "   %s\n", textsafe.Line(fmt.Sprintf(format, args...)))
}

func (d *demoRun) block(text string) {
	for _, line := range strings.Split(strings.TrimRight(text, "\n"), "\n") {
		fmt.Fprintf(d.w, "   | %s\n", textsafe.Line(line))
	}
}

func (d *demoRun) hook(method string, input, output any) (patchReply, error) {
	var r patchReply
	err := d.c.call(method, map[string]any{"input": input, "output": output}, &r)
	return r, err
}

// event sends one OpenCode event as the shim forwards it.
func (d *demoRun) event(typ string, properties map[string]any) error {
	return d.c.call("event", map[string]any{"input": map[string]any{"event": map[string]any{"type": typ, "properties": properties}}}, nil)
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
	demoParent  = "ses_demo_build"
	demoExplore = "ses_demo_explore"
	demoGeneral = "ses_demo_general"
	// demoLimited is general's model, answering 429; demoFallback the
	// model its agentModels entry falls back to.
	demoLimited  = "anthropic/claude-sonnet-4-6"
	demoFallback = "openai/gpt-5.4"
)

// start starts a sidecar on the demo's project database, as OpenCode
// starting the plugin does, and initializes it with what the shim sends
// for a stock OpenCode: its agents, and the user's one option.
func (d *demoRun) start() error {
	c, closeFn, err := startInProcess(d.state)
	if err != nil {
		return err
	}
	d.c, d.close = c, closeFn
	if err := d.c.call("initialize", map[string]any{"protocolVersion": 1,
		"clientInfo": map[string]any{"name": "hookwire-demo", "version": version},
		"config": map[string]any{
			"primaryAgents": []string{"build", "plan"},
			"subagents":     []string{"explore", "general"},
			"agentModels":   map[string]any{"general": map[string]any{"fallbackModels": []string{demoFallback}}},
		}}, nil); err != nil {
		return err
	}
	return d.c.call("providers.update", map[string]any{"connectedProviders": []string{"anthropic", "openai"},
		"availableModels": []string{demoLimited, demoFallback}, "defaultModel": demoLimited}, nil)
}

// stop ends the sidecar as OpenCode exiting does (shutdown, then its
// input closes).
func (d *demoRun) stop() {
	if d.c == nil {
		return
	}
	_ = d.c.call("shutdown", nil, nil)
	d.close()
	d.c = nil
}

// userTurn is the user's message to build: its chat.message, as OpenCode
// sends it.
func (d *demoRun) userTurn(id string) error {
	_, err := d.hook("chat.message", map[string]any{"sessionID": demoParent, "agent": "build"},
		map[string]any{"message": map[string]any{"id": id, "role": "user", "agent": "build",
			"model": map[string]any{"providerID": "anthropic", "modelID": "claude-sonnet-4-6"}}, "parts": []any{}})
	return err
}

// delegate is build's task call, its child session starting, and (unless
// failed) the call finishing with the child's answer in OpenCode 1.18's
// form. It returns the task_id the call went out with.
func (d *demoRun) delegate(call, agent, description, taskID, child, answer string) (string, error) {
	args := map[string]any{"description": description, "prompt": description + ".", "subagent_type": agent}
	if taskID != "" {
		args["task_id"] = taskID
	}
	out := map[string]any{"args": args}
	r, err := d.hook("tool.execute.before", map[string]any{"tool": "task", "sessionID": demoParent, "callID": call}, out)
	if err != nil {
		return "", err
	}
	sent := taskID
	for _, op := range r.Patch {
		if op.Path == "/args/task_id" {
			_ = json.Unmarshal(op.Value, &sent)
		}
	}
	if taskID == "" {
		if err := d.event("session.created", map[string]any{"sessionID": child,
			"info": map[string]any{"id": child, "parentID": demoParent, "agent": agent}}); err != nil {
			return "", err
		}
	}
	if answer == "" {
		return sent, nil
	}
	_, err = d.hook("tool.execute.after", map[string]any{"tool": "task", "sessionID": demoParent, "callID": call},
		map[string]any{"title": description, "output": "<task id=\"" + child + "\" state=\"completed\">\n<task_result>\n" + answer + "\n</task_result>\n</task>", "metadata": map[string]any{}})
	return sent, err
}

type demoEntry struct {
	Alias, TaskID, Label string
	Model                struct{ Model string }
	Switches             []struct{ From, To, Reason string }
}

func (d *demoRun) entries() (map[string]demoEntry, error) {
	var list []demoEntry
	if err := d.c.call("sessions.list", map[string]any{"sessionID": demoParent}, &list); err != nil {
		return nil, err
	}
	out := make(map[string]demoEntry, len(list))
	for _, e := range list {
		out[e.TaskID] = e
	}
	return out, nil
}

func (d *demoRun) script() error {
	fmt.Fprintln(d.w, "hookwire demo: a stock OpenCode session (the build agent, with its explore and general")
	fmt.Fprintln(d.w, "subagents) played through the real hookwire sidecar in this process. No OpenCode, no network:")
	fmt.Fprintln(d.w, "each step sends what OpenCode sends the plugin, and says what hookwire did with it.")

	if err := d.start(); err != nil {
		return err
	}
	d.title("OpenCode starts with the plugin; it starts the sidecar")
	d.say("the project's memory is a database (here a temporary one; a real project keeps its own)")
	d.say("general is set to fall back to %s when its model fails; the plugin option behind it:", demoFallback)
	d.say(`  {"agentModels": {"general": {"fallbackModels": ["%s"]}}}`, demoFallback)

	if err := d.userTurn("msg_1"); err != nil {
		return err
	}
	if _, err := d.delegate("call_1", "explore", "Map the config loader", "", demoExplore, "The loader is in config/load.go."); err != nil {
		return err
	}
	es, err := d.entries()
	if err != nil {
		return err
	}
	d.title("build delegates to explore: task(subagent_type=\"explore\", \"Map the config loader\")")
	d.say("explore's session %s is remembered as %s", demoExplore, es[demoExplore].Alias)
	d.say("build can continue that same session later by passing task_id=\"%s\"", es[demoExplore].Alias)

	if err := d.fallback(); err != nil {
		return err
	}
	if err := d.resumableList(); err != nil {
		return err
	}
	if err := d.guidance(); err != nil {
		return err
	}

	d.stop()
	d.title("OpenCode exits. Later, a new OpenCode process starts on the same project")
	if err := d.start(); err != nil {
		return err
	}
	if err := d.userTurn("msg_5"); err != nil {
		return err
	}
	sent, err := d.delegate("call_4", "explore", "Resume config map", "exp-1", demoExplore, "Also config/env.go.")
	if err != nil {
		return err
	}
	d.say("build resumes: task(subagent_type=\"explore\", task_id=\"exp-1\", \"Resume config map\")")
	d.say("the new sidecar read exp-1 from the project's memory: the call goes to OpenCode as task_id=%q,", sent)
	d.say("so explore continues the session it worked in before, with what it found then")
	d.stop()

	d.title("hookwire sessions: what the project remembers (any process, any time)")
	var out strings.Builder
	if code := sessionsCmd([]string{"--state", d.state}, &out, &out); code != 0 {
		return fmt.Errorf("hookwire sessions exited %d: %s", code, out.String())
	}
	text := strings.TrimRight(out.String(), "\n")
	if _, rest, ok := strings.Cut(text, ": "); ok {
		text = "project memory: " + rest // the temporary path says nothing
	}
	d.block(text)
	fmt.Fprintln(d.w)
	return nil
}

// fallback: general's model answers 429; hookwire stops the attempt and
// the same task runs again on general's fallback (PROTOCOL.md 4.8, the
// shim's part played here).
func (d *demoRun) fallback() error {
	if _, err := d.delegate("call_2", "general", "Write the loader tests", "", demoGeneral, ""); err != nil {
		return err
	}
	model := func(m string) map[string]any {
		provider, id, _ := strings.Cut(m, "/")
		return map[string]any{"providerID": provider, "modelID": id}
	}
	if _, err := d.hook("chat.message", map[string]any{"sessionID": demoGeneral, "agent": "general"},
		map[string]any{"message": map[string]any{"id": "msg_g1", "role": "user", "agent": "general", "model": model(demoLimited)}, "parts": []any{}}); err != nil {
		return err
	}
	var failed struct {
		Class, Action, Until string
		Fallback             struct{ ProviderID, ModelID string }
	}
	if err := d.c.call("model.failed", map[string]any{"sessionID": demoGeneral, "model": demoLimited,
		"error": map[string]any{"statusCode": 429, "message": "Rate limit reached"}, "retryAfter": "30"}, &failed); err != nil {
		return err
	}
	d.title("build delegates to general: task(subagent_type=\"general\", \"Write the loader tests\")")
	d.say("general's model, %s, answers HTTP 429 (rate limited); OpenCode alone would retry it for a while, then fail the task", demoLimited)
	if failed.Action != "abort" {
		return fmt.Errorf("model.failed: expected the subagent to be moved, got %+v", failed)
	}
	to := failed.Fallback.ProviderID + "/" + failed.Fallback.ModelID
	d.say("hookwire stops that attempt at once and runs the same task again on %s;", to)
	rest := "a while"
	if until, err := time.Parse(time.RFC3339Nano, failed.Until); err == nil {
		rest = fmt.Sprintf("%d minutes", int(time.Until(until).Round(time.Minute).Minutes()))
	}
	d.say("%s is left alone by every OpenCode process on the project for %s", demoLimited, rest)
	// The shim runs the child again on the fallback (its prompt's
	// chat.message: the switch applied) and finishes the parent's task call
	// with its answer (shim/src/fallback.ts).
	if _, err := d.hook("chat.message", map[string]any{"sessionID": demoGeneral, "agent": "general"},
		map[string]any{"message": map[string]any{"id": "msg_g2", "role": "user", "agent": "general", "model": model(to)}, "parts": []any{}}); err != nil {
		return err
	}
	if _, err := d.hook("tool.execute.after", map[string]any{"tool": "task", "sessionID": demoParent, "callID": "call_2"},
		map[string]any{"title": "Write the loader tests", "output": "<task id=\"" + demoGeneral + "\" state=\"completed\">\n<task_result>\nAdded config/load_test.go.\n</task_result>\n</task>", "metadata": map[string]any{}}); err != nil {
		return err
	}
	es, err := d.entries()
	if err != nil {
		return err
	}
	e := es[demoGeneral]
	d.say("build's task call gets general's own answer, as if nothing had failed: %s, now on %s", e.Alias, e.Model.Model)
	for _, sw := range e.Switches {
		d.say("switch recorded: %s -> %s (%s)", sw.From, sw.To, sw.Reason)
	}
	return nil
}

// resumableList: build's next request carries the list of sessions it can
// continue, added to the user's message as a separate part.
func (d *demoRun) resumableList() error {
	if err := d.userTurn("msg_3"); err != nil {
		return err
	}
	history := []any{
		map[string]any{"info": map[string]any{"id": "msg_1", "role": "user", "agent": "build", "sessionID": demoParent},
			"parts": []any{map[string]any{"type": "text", "text": "Map the config loader and write its tests."}}},
		map[string]any{"info": map[string]any{"id": "msg_2", "role": "assistant", "sessionID": demoParent}, "parts": []any{}},
		map[string]any{"info": map[string]any{"id": "msg_3", "role": "user", "agent": "build", "sessionID": demoParent},
			"parts": []any{map[string]any{"type": "text", "text": "Good. What else reads the config?"}}},
	}
	r, err := d.hook("chat.messages.transform", map[string]any{}, map[string]any{"messages": history})
	if err != nil {
		return err
	}
	d.title("The user writes again; build's next request to its model")
	for _, op := range r.Patch {
		if text := valueString(op.Value); strings.HasPrefix(text, "### Resumable Sessions") && strings.HasPrefix(op.Path, "/messages/2/") {
			d.say("hookwire adds the sessions build can continue to the user's message, as a separate part")
			d.say("(the user's words untouched; earlier messages keep theirs byte for byte, so the prompt cache holds):")
			d.block(text)
		}
	}
	return nil
}

// guidance: a task call naming an agent that does not exist fails; the
// error build's model reads says how to call it right.
func (d *demoRun) guidance() error {
	history := []any{
		map[string]any{"info": map[string]any{"id": "msg_3", "role": "user", "agent": "build", "sessionID": demoParent},
			"parts": []any{map[string]any{"type": "text", "text": "Good. What else reads the config?"}}},
		map[string]any{"info": map[string]any{"id": "msg_4", "role": "assistant", "sessionID": demoParent},
			"parts": []any{map[string]any{"type": "tool", "tool": "task", "callID": "call_3", "state": map[string]any{"status": "error",
				"input": map[string]any{"description": "Find config readers", "prompt": "Who reads the config?", "subagent_type": "explorer"},
				"error": "Unknown agent type: explorer is not a valid agent type"}}}},
	}
	r, err := d.hook("chat.messages.transform", map[string]any{}, map[string]any{"messages": history})
	if err != nil {
		return err
	}
	d.title("build delegates to \"explorer\", an agent that does not exist: the task call fails")
	for _, op := range r.Patch {
		if strings.HasSuffix(op.Path, "/state/error") {
			d.say("the error build's model reads next gets what to do instead:")
			d.block(valueString(op.Value))
		}
	}
	return nil
}
