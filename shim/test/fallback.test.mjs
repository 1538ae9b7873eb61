// Runtime model fallback (fallback.ts, PROTOCOL.md 4.8): which OpenCode
// events report a failed model call, and the whole path against the real
// sidecar: a subagent's 429 aborts the child, and at the parent's next
// request the child runs again on its fallback and its answer replaces the
// task call's error, in that request and in OpenCode's history.
import assert from "node:assert/strict";
import { test } from "node:test";
import { createHookwire } from "../dist/plugin.js";
import { CONTINUE_TEXT, childOf, failureOf, taskOutput } from "../dist/fallback.js";
import { alive, realSidecar, scratch, waitFor } from "./helpers.mjs";

test("failureOf: the events that report a failed model call, and those that do not", () => {
  const rows = [
    [
      "a retry status (no model, no status code)",
      { type: "session.status", properties: { sessionID: "ses_c", status: { type: "retry", attempt: 1, message: "Rate limit reached for m", next: 1000 } } },
      { sessionID: "ses_c", error: { message: "Rate limit reached for m" }, retryAt: 1000, attempt: 1 },
    ],
    ["a busy status", { type: "session.status", properties: { sessionID: "ses_c", status: { type: "busy" } } }, undefined],
    [
      "an assistant message ending in an API error, with its model and retry-after",
      {
        type: "message.updated",
        properties: {
          info: {
            role: "assistant", sessionID: "ses_c", providerID: "fake", modelID: "fake-model-3",
            error: { name: "APIError", data: { message: "Rate limit reached", statusCode: 429, responseHeaders: { "Retry-After": "2" } } },
          },
        },
      },
      { sessionID: "ses_c", model: { providerID: "fake", modelID: "fake-model-3" }, error: { name: "APIError", message: "Rate limit reached", statusCode: 429 }, retryAfter: "2" },
    ],
    ["an aborted message", { type: "message.updated", properties: { info: { role: "assistant", sessionID: "s", error: { name: "MessageAbortedError", data: { message: "aborted" } } } } }, undefined],
    ["a user message", { type: "message.updated", properties: { info: { role: "user", sessionID: "s", error: { name: "X" } } } }, undefined],
    [
      "session.error",
      { type: "session.error", properties: { sessionID: "ses_c", error: { name: "ProviderModelNotFoundError", data: { message: "Model not found" } } } },
      { sessionID: "ses_c", error: { name: "ProviderModelNotFoundError", message: "Model not found" } },
    ],
    ["session.error without a session", { type: "session.error", properties: { error: { name: "X" } } }, undefined],
    ["no properties", { type: "session.error" }, undefined],
    ["not an event", null, undefined],
  ];
  for (const [name, event, want] of rows) assert.deepEqual(failureOf(event), want, name);
});

test("childOf and taskOutput: the child of an errored task part, and the task tool's own form", () => {
  assert.equal(childOf({ metadata: { sessionId: "ses_meta" }, error: "Subagent failed (task_id: ses_text): x" }), "ses_meta");
  assert.equal(childOf({ error: "Subagent failed (task_id: ses_text): Rate limit reached" }), "ses_text");
  assert.equal(childOf({ error: "Task cancelled" }), undefined);
  assert.equal(taskOutput("ses_1", "hi"), '<task id="ses_1" state="completed">\n<task_result>\nhi\n</task_result>\n</task>');
});

/** An OpenCode SDK client that records what runtime fallback asks of it. */
function fallbackClient() {
  const calls = { abort: [], prompt: [], patch: [], toasts: [] };
  const client = {
    app: { log: () => Promise.resolve(true), agents: async () => ({ data: [] }) },
    tui: { showToast: (o) => (calls.toasts.push(o.body.message), Promise.resolve({ data: true })) },
    config: {
      providers: async () => ({
        data: {
          providers: [{ id: "fake", models: { "fake-model": {}, "fake-model-2": {}, "fake-model-3": {} } }],
          default: { fake: "fake-model" },
        },
      }),
    },
    session: {
      abort: async (o) => (calls.abort.push(o.path.id), { data: true }),
      prompt: async (o) => {
        calls.prompt.push(o);
        return { data: { info: { role: "assistant" }, parts: [{ type: "step-start" }, { type: "text", text: `EXPLORER_REPLY on ${o.body.model.modelID}` }] } };
      },
      _client: { patch: async (o) => (calls.patch.push(o), { data: {} }) },
    },
  };
  return { client, calls };
}

/** The parent's history as the transform gets it: the task call failed with "Task cancelled" after the abort. */
function erroredHistory() {
  return {
    messages: [
      { info: { id: "msg_u", role: "user", sessionID: "ses_p", agent: "orchestrator" }, parts: [{ type: "text", text: "Go" }] },
      {
        info: { id: "msg_a", role: "assistant", sessionID: "ses_p" },
        parts: [
          {
            id: "prt_1", messageID: "msg_a", sessionID: "ses_p", type: "tool", tool: "task", callID: "call_1",
            state: {
              status: "error", error: "Task cancelled",
              input: { description: "Explore the repo", prompt: "List the files.", subagent_type: "explorer" },
              metadata: { parentSessionId: "ses_p", sessionId: "ses_c", model: { providerID: "fake", modelID: "fake-model-3" } },
              time: { start: 1, end: 2 },
            },
          },
        ],
      },
    ],
  };
}

test("real sidecar: a subagent's 429 aborts it; the parent's next request gets its answer from the fallback", async () => {
  const s = scratch();
  const { client, calls } = fallbackClient();
  const config = { agentModels: { explorer: { fallbackModels: ["fake/fake-model-2"] } } };
  const terminal = []; // what `opencode run` would print on stderr
  const h = createHookwire({ client }, { binary: realSidecar(), trace: s.trace, logFile: s.log, timeoutMs: 3000, state: false, ...config }, { ...process.env, HOME: s.dir }, {
    terminal: (line) => terminal.push(line),
  });
  try {
    const msg = (session, agent, modelID) => ({ message: { id: "m", role: "user", sessionID: session, agent, model: { providerID: "fake", modelID } }, parts: [] });
    await h.hooks["chat.message"]({ sessionID: "ses_p", agent: "orchestrator" }, msg("ses_p", "orchestrator", "fake-model"));
    await h.hooks["tool.execute.before"]({ tool: "task", sessionID: "ses_p", callID: "call_1" }, { args: { description: "Explore the repo", prompt: "List the files.", subagent_type: "explorer" } });
    await h.hooks.event({ event: { type: "session.created", properties: { sessionID: "ses_c", info: { id: "ses_c", parentID: "ses_p", agent: "explorer" } } } });
    const child = msg("ses_c", "explorer", "fake-model-3");
    await h.hooks["chat.message"]({ sessionID: "ses_c", agent: "explorer" }, child);
    assert.equal(child.message.model.modelID, "fake-model-3", "a healthy model is left");

    await h.hooks.event({ event: { type: "session.status", properties: { sessionID: "ses_c", status: { type: "retry", attempt: 1, message: "Rate limit reached for fake-model-3", next: Date.now() + 2000 } } } });
    await h.hooks.event({ event: { type: "session.status", properties: { sessionID: "ses_c", status: { type: "retry", attempt: 2, message: "Rate limit reached for fake-model-3", next: Date.now() + 2000 } } } });
    await waitFor(() => calls.abort.length > 0, 3000);
    assert.deepEqual(calls.abort, ["ses_c"], "aborted once");
    assert.equal(calls.toasts.length, 1, "one toast per switch");
    assert.match(calls.toasts[0], /fake\/fake-model-3 failed \(rate-limit: Rate limit reached for fake-model-3\); switching to fake\/fake-model-2/);
    // Under `opencode run` the switch is said before OpenCode prints the stopped attempt as failed.
    assert.deepEqual(terminal, [
      "hookwire: fake/fake-model-3 failed (rate-limit: Rate limit reached for fake-model-3); switching to fake/fake-model-2: " +
        'the subagent\'s attempt on fake/fake-model-3 is stopped (OpenCode shows it as "Task cancelled") and the same task runs again on fake/fake-model-2',
    ]);

    const out = erroredHistory();
    await h.hooks["experimental.chat.messages.transform"]({}, out);
    assert.equal(calls.prompt.length, 1);
    assert.deepEqual(calls.prompt[0].path, { id: "ses_c" });
    assert.deepEqual(calls.prompt[0].body.model, { providerID: "fake", modelID: "fake-model-2" });
    assert.equal(calls.prompt[0].body.agent, "explorer");
    assert.equal(calls.prompt[0].body.parts[0].text, CONTINUE_TEXT);
    const part = out.messages[1].parts[0];
    assert.equal(part.state.status, "completed");
    assert.equal(part.state.output, taskOutput("ses_c", "EXPLORER_REPLY on fake-model-2"));
    assert.equal(calls.patch.length, 1, "stored in OpenCode's history");
    assert.deepEqual(calls.patch[0].path, { sessionID: "ses_p", messageID: "msg_a", partID: "prt_1" });
    assert.equal(calls.patch[0].body.state.status, "completed");
    assert.equal(calls.patch[0].body.state.output, part.state.output);
    assert.equal(
      terminal[1],
      'hookwire: the explorer task finished on fake/fake-model-2 after fake/fake-model-3 failed (rate-limit: Rate limit reached for fake-model-3); the "Task cancelled" before it was the stopped attempt, not the task',
    );
    assert.equal(calls.toasts.length, 1, "the TUI gets no second toast: it shows the task completed");

    // The next request's fresh copy of the history: the same answer, no second run.
    const again = erroredHistory();
    await h.hooks["experimental.chat.messages.transform"]({}, again);
    assert.equal(calls.prompt.length, 1);
    assert.equal(again.messages[1].parts[0].state.output, part.state.output);

    // Another parent's errored task part with the same callID is its own call: left as it is.
    const other = erroredHistory();
    other.messages[0].info.sessionID = "ses_other_parent";
    other.messages[1].info.sessionID = "ses_other_parent";
    Object.assign(other.messages[1].parts[0], { sessionID: "ses_other_parent", id: "prt_9", messageID: "msg_9" });
    other.messages[1].parts[0].state.metadata.sessionId = "ses_other_child";
    await h.hooks["experimental.chat.messages.transform"]({}, other);
    assert.equal(other.messages[1].parts[0].state.status, "error", "keyed by session and callID, not callID alone");
    assert.equal(other.messages[1].parts[0].state.error, "Task cancelled");
    assert.equal(calls.prompt.length, 1);

    // OpenCode runs the rescue prompt through chat.message on the fallback
    // (the fake client's prompt does not call the hooks): the switch applied.
    await h.hooks["chat.message"]({ sessionID: "ses_c", agent: "explorer" }, msg("ses_c", "explorer", "fake-model-2"));
    // The rescued call was finished as tool.execute.after would have: an alias, and the switch.
    const list = await h.sidecar.request("sessions.list", { sessionID: "ses_p" }, 3000);
    assert.ok(list.ok);
    const [entry] = list.result;
    assert.equal(entry.alias, "exp-1");
    assert.equal(entry.taskId, "ses_c");
    assert.equal(entry.model.model, "fake/fake-model-2");
    assert.equal(entry.switches.length, 1);
    assert.equal(entry.switches[0].from, "fake/fake-model-3");
    const status = await h.sidecar.request("status", null, 3000);
    assert.equal(status.result.models.health[0].model, "fake/fake-model-3");
    assert.equal(status.result.models.health[0].cooling, true);
  } finally {
    const pid = h.sidecar.pid;
    await h.dispose();
    await waitFor(() => !alive(pid), 3000);
    s.cleanup();
  }
});

test("real sidecar: the run on the fallback has its own deadline, not the hook's: a child slower than the hook deadline is rescued", async () => {
  const s = scratch();
  const { client, calls } = fallbackClient();
  const timeoutMs = 2000;
  const answer = client.session.prompt;
  // A model run takes longer than any hook may: the prompt answers after the hook deadline has passed.
  client.session.prompt = async (o) => (await new Promise((r) => setTimeout(r, timeoutMs + 500)), answer(o));
  const config = { agentModels: { explorer: { fallbackModels: ["fake/fake-model-2"] } } };
  const h = createHookwire({ client }, { binary: realSidecar(), trace: s.trace, logFile: s.log, timeoutMs, state: false, ...config }, { ...process.env, HOME: s.dir });
  try {
    await waitFor(() => h.sidecar.state === "ready", 30_000); // the hooks below must not fail open on a slow start
    const msg = (session, agent, modelID) => ({ message: { id: "m", role: "user", sessionID: session, agent, model: { providerID: "fake", modelID } }, parts: [] });
    await h.hooks["chat.message"]({ sessionID: "ses_p", agent: "orchestrator" }, msg("ses_p", "orchestrator", "fake-model"));
    await h.hooks["tool.execute.before"]({ tool: "task", sessionID: "ses_p", callID: "call_1" }, { args: { description: "Explore the repo", prompt: "List the files.", subagent_type: "explorer" } });
    await h.hooks.event({ event: { type: "session.created", properties: { sessionID: "ses_c", info: { id: "ses_c", parentID: "ses_p", agent: "explorer" } } } });
    await h.hooks["chat.message"]({ sessionID: "ses_c", agent: "explorer" }, msg("ses_c", "explorer", "fake-model-3"));
    await h.hooks.event({ event: { type: "session.status", properties: { sessionID: "ses_c", status: { type: "retry", attempt: 1, message: "Rate limit reached for fake-model-3", next: Date.now() + 2000 } } } });
    await waitFor(() => calls.abort.length > 0, 5000);

    const out = erroredHistory();
    const started = Date.now();
    await h.hooks["experimental.chat.messages.transform"]({}, out);
    assert.ok(Date.now() - started >= timeoutMs, "the request waited for the run, past the hook deadline");
    assert.equal(calls.prompt.length, 1);
    const part = out.messages[1].parts[0];
    assert.equal(part.state.status, "completed", part.state.error);
    assert.equal(part.state.output, taskOutput("ses_c", "EXPLORER_REPLY on fake-model-2"));
  } finally {
    const pid = h.sidecar.pid;
    await h.dispose();
    await waitFor(() => !alive(pid), 3000);
    s.cleanup();
  }
});

test("a task error with no fallback plan is left as it is", async () => {
  const s = scratch();
  const { client, calls } = fallbackClient();
  const h = createHookwire({ client }, { binary: realSidecar(), trace: s.trace, logFile: s.log, timeoutMs: 3000, state: false }, { ...process.env, HOME: s.dir });
  try {
    const out = erroredHistory();
    await h.hooks["experimental.chat.messages.transform"]({}, out);
    assert.equal(out.messages[1].parts[0].state.status, "error");
    assert.equal(calls.prompt.length, 0);
  } finally {
    const pid = h.sidecar.pid;
    await h.dispose();
    await waitFor(() => !alive(pid), 3000);
    s.cleanup();
  }
});

/** The user's own session (an agent with an agentModels entry) failing on its model. */
async function userSessionFails(oneShot) {
  const s = scratch();
  const { client, calls } = fallbackClient();
  calls.promptAsync = [];
  client.session.messages = async () => ({
    data: [
      {
        info: { role: "user", agent: "orchestrator" },
        parts: [
          { id: "prt_t", type: "text", text: "Do it." },
          { type: "text", text: "reminder", synthetic: true },
          { id: "prt_f", type: "file", mime: "image/png", url: "data:image/png;base64,iVBORw0KGgo=", filename: "shot.png" },
          { id: "prt_a", type: "agent", name: "explorer", source: { value: "@explorer", start: 7, end: 16 } },
        ],
      },
      { info: { role: "assistant" }, parts: [] },
    ],
  });
  client.session.promptAsync = async (o) => (calls.promptAsync.push(o), {});
  const argv = process.argv;
  if (oneShot) process.argv = [argv[0], argv[1], "run"];
  const config = { agentModels: { orchestrator: { fallbackModels: ["fake/fake-model-2"] } } };
  const h = createHookwire({ client }, { binary: realSidecar(), trace: s.trace, logFile: s.log, timeoutMs: 3000, state: false, ...config }, { ...process.env, HOME: s.dir });
  process.argv = argv;
  try {
    const msg = { message: { id: "m", role: "user", sessionID: "ses_u", agent: "orchestrator", model: { providerID: "fake", modelID: "fake-model-3" } }, parts: [] };
    await h.hooks["chat.message"]({ sessionID: "ses_u", agent: "orchestrator" }, msg);
    await h.hooks.event({ event: { type: "session.status", properties: { sessionID: "ses_u", status: { type: "retry", attempt: 1, message: "Rate limit reached", next: Date.now() + 2000 } } } });
    await waitFor(() => calls.toasts.length > 0, 3000);
    await waitFor(() => oneShot || calls.promptAsync.length > 0, 3000);
    return calls;
  } finally {
    const pid = h.sidecar.pid;
    await h.dispose();
    await waitFor(() => !alive(pid), 3000);
    s.cleanup();
  }
}

test("real sidecar: the user's own session is aborted and its last message sent again on the fallback", async () => {
  const calls = await userSessionFails(false);
  assert.deepEqual(calls.abort, ["ses_u"]);
  assert.equal(calls.promptAsync.length, 1);
  assert.deepEqual(calls.promptAsync[0].body.model, { providerID: "fake", modelID: "fake-model-2" });
  assert.equal(calls.promptAsync[0].body.agent, "orchestrator");
  assert.deepEqual(
    calls.promptAsync[0].body.parts,
    [
      { type: "text", text: "Do it." },
      { type: "file", mime: "image/png", url: "data:image/png;base64,iVBORw0KGgo=", filename: "shot.png" },
      { type: "agent", name: "explorer", source: { value: "@explorer", start: 7, end: 16 } },
    ],
    "the user's whole message (an image, an @agent), not the synthetic parts",
  );
});

test("real sidecar: under `opencode run` the user's session is left (an abort would end the run)", async () => {
  const calls = await userSessionFails(true);
  assert.deepEqual(calls.abort, []);
  assert.equal(calls.promptAsync.length, 0);
  assert.match(calls.toasts[0], /switching to fake\/fake-model-2 at the next message/);
});

test("real sidecar: when the run on the fallback fails too, the task call names the alias to resume", async () => {
  const s = scratch();
  const { client, calls } = fallbackClient();
  client.session.prompt = async (o) => (calls.prompt.push(o), { error: { name: "APIError", data: { message: "overloaded" } } });
  const config = { agentModels: { explorer: { fallbackModels: ["fake/fake-model-2"] } } };
  const h = createHookwire({ client }, { binary: realSidecar(), trace: s.trace, logFile: s.log, timeoutMs: 3000, state: false, ...config }, { ...process.env, HOME: s.dir });
  try {
    const msg = (session, agent, modelID) => ({ message: { id: "m", role: "user", sessionID: session, agent, model: { providerID: "fake", modelID } }, parts: [] });
    await h.hooks["chat.message"]({ sessionID: "ses_p", agent: "orchestrator" }, msg("ses_p", "orchestrator", "fake-model"));
    await h.hooks["tool.execute.before"]({ tool: "task", sessionID: "ses_p", callID: "call_1" }, { args: { description: "Explore the repo", prompt: "List the files.", subagent_type: "explorer" } });
    await h.hooks.event({ event: { type: "session.created", properties: { sessionID: "ses_c", info: { id: "ses_c", parentID: "ses_p", agent: "explorer" } } } });
    await h.hooks["chat.message"]({ sessionID: "ses_c", agent: "explorer" }, msg("ses_c", "explorer", "fake-model-3"));
    await h.hooks.event({ event: { type: "session.status", properties: { sessionID: "ses_c", status: { type: "retry", attempt: 1, message: "Rate limit reached for fake-model-3", next: Date.now() + 2000 } } } });
    await waitFor(() => calls.abort.length > 0, 3000);

    const out = erroredHistory();
    await h.hooks["experimental.chat.messages.transform"]({}, out);
    const part = out.messages[1].parts[0];
    assert.equal(part.state.status, "error");
    assert.match(part.state.error, /^Task cancelled\n\[hookwire runtime fallback\] fake\/fake-model-3 failed \(rate-limit: Rate limit reached for fake-model-3\) and the run on fake\/fake-model-2 did not finish/);
    assert.match(part.state.error, /resume it with task_id: "exp-1"/);
    assert.equal(calls.patch.length, 1, "the error text is stored in OpenCode's history");
    assert.equal(calls.patch[0].body.state.error, part.state.error);

    // Later copies get the same text, without another run.
    const again = erroredHistory();
    await h.hooks["experimental.chat.messages.transform"]({}, again);
    assert.equal(again.messages[1].parts[0].state.error, part.state.error);
    assert.equal(calls.prompt.length, 1);
  } finally {
    const pid = h.sidecar.pid;
    await h.dispose();
    await waitFor(() => !alive(pid), 3000);
    s.cleanup();
  }
});

test("in the TUI the switch's toast says no more than the TUI shows: no \"Task cancelled\" remark (only opencode run prints that)", async () => {
  const s = scratch();
  const { client, calls } = fallbackClient();
  const config = { agentModels: { explorer: { fallbackModels: ["fake/fake-model-2"] } } };
  const h = createHookwire({ client }, { binary: realSidecar(), trace: s.trace, logFile: s.log, timeoutMs: 3000, state: false, ...config }, { ...process.env, HOME: s.dir }, { terminal: null });
  try {
    const msg = (session, agent, modelID) => ({ message: { id: "m", role: "user", sessionID: session, agent, model: { providerID: "fake", modelID } }, parts: [] });
    await h.hooks["chat.message"]({ sessionID: "ses_p", agent: "orchestrator" }, msg("ses_p", "orchestrator", "fake-model"));
    await h.hooks["tool.execute.before"]({ tool: "task", sessionID: "ses_p", callID: "call_1" }, { args: { description: "Explore", prompt: "List.", subagent_type: "explorer" } });
    await h.hooks.event({ event: { type: "session.created", properties: { sessionID: "ses_c", info: { id: "ses_c", parentID: "ses_p", agent: "explorer" } } } });
    await h.hooks["chat.message"]({ sessionID: "ses_c", agent: "explorer" }, msg("ses_c", "explorer", "fake-model-3"));
    await h.hooks.event({ event: { type: "session.status", properties: { sessionID: "ses_c", status: { type: "retry", attempt: 1, message: "Rate limit reached for fake-model-3", next: Date.now() + 2000 } } } });
    await waitFor(() => calls.toasts.length > 0, 3000);
    assert.match(calls.toasts[0], /the subagent's attempt on fake\/fake-model-3 is stopped and the same task runs again on fake\/fake-model-2/);
    assert.doesNotMatch(calls.toasts[0], /Task cancelled/);
  } finally {
    await h.dispose();
    s.cleanup();
  }
});
