// OpenCode 2: the package's `./server` entry against the v2 host double
// (v2host.mjs, rebuilt to the released 2.0.x plugin API, each shape cited
// there) with the real sidecar, default options and stock agents: the
// module decodes, setup registers, and a 3-turn session gets what it gets
// on 1.x (issue 31's "Done when").
import assert from "node:assert/strict";
import { test } from "node:test";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { execFileSync } from "node:child_process";
import { decodeDefinition, LoadError, resolveEntry, ToolError, V2Host } from "./v2host.mjs";
import { realSidecar, scratch, shimDir, waitFor, sidecarPids } from "./helpers.mjs";

const PARENT = "ses_parent_v2";

const sidecars = sidecarPids;

/**
 * Default options but what a test needs to look inside: the real sidecar,
 * its trace and log. The state is the default per-project database, under
 * an XDG_STATE_HOME of the scratch directory.
 */
const optionsOf = (s, extra = {}) => {
  process.env.XDG_STATE_HOME = join(s.dir, "xdg-state");
  return { binary: realSidecar(), trace: s.trace, logFile: s.log, timeoutMs: 4000, transformTimeoutMs: 6000, ...extra };
};
const user = (id, text) => ({ id, role: "user", content: [{ type: "text", text }] });
/** The newest Resumable Sessions block of a draft (cache-stable mode puts it with the newest user message). */
const blockOf = (d) => [...d.system.map((p) => p.text), ...d.messages.flatMap((m) => m.content.filter((c) => c.type === "text").map((c) => c.text))].findLast((t) => t.includes("### Resumable Sessions"));

test("the package's server subpath is what OpenCode 2 loads, and it decodes; the 1.x main entry does not", async () => {
  assert.equal(resolveEntry(shimDir), join(shimDir, "dist", "server.js"));
  const server = decodeDefinition(await import(pathToFileURL(join(shimDir, "dist", "server.js")).href));
  assert.equal(server.id, "hookwire");
  assert.equal(typeof server.setup, "function");
  assert.equal(typeof server.server, "function", "1.14+ take the same subpath and call server()");
  const main = await import(pathToFileURL(join(shimDir, "dist", "index.js")).href);
  assert.throws(() => decodeDefinition(main), LoadError, "a function default is the 1.x form; v2 rejects it");
  assert.equal(typeof main.default, "function", "1.3 calls the default export");
  assert.equal(main.default.id, "hookwire");
  assert.equal(main.default.server, main.default, "1.14+ call default.server");
});

test("the host double refuses what its commit refuses: a function default, unknown hook names", async () => {
  await assert.rejects(new V2Host().loadDefinition({ default: async () => ({}) }), LoadError);
  await assert.rejects(new V2Host().loadDefinition({ default: { id: "x" } }), LoadError);
  await assert.rejects(new V2Host().loadDefinition({ default: { id: "x", setup: (ctx) => ctx.session.hook("chat.message", () => {}) } }), /unknown session hook "chat.message"/);
  await assert.rejects(new V2Host().loadDefinition({ default: { id: "x", setup: (ctx) => ctx.tool.hook("before", () => {}) } }), /unknown tool hook "before"/);
  const host = await new V2Host().loadDefinition({ default: { id: "x", setup: (ctx) => ctx.session.hook("context", (d) => (d.sessionID = "other")) } });
  await assert.rejects(host.context({ sessionID: "ses_1" }), TypeError, "readonly draft fields cannot be written");
});

test("3 turns on OpenCode 2 with stock agents: two delegations, the Resumable Sessions, resume by alias, an unknown agent, a background child, a deleted parent", async () => {
  const s = scratch();
  const project = join(s.dir, "project");
  const host = new V2Host({ options: optionsOf(s), directory: project });
  const binary = realSidecar();
  const history = [user("msg_u1", "Look around the repo and summarise it")];
  try {
    await host.load(shimDir);
    assert.deepEqual([...host.session.keys()], ["context", "retry"], "the retry hook: the same-call rescue (PROTOCOL.md 4.8)");
    assert.deepEqual([...host.tool.keys()].sort(), ["execute.after", "execute.before"]);

    // Turn 1: build's first request, then two delegations.
    await host.context({ sessionID: PARENT, agent: "build", system: [{ type: "text", text: "You are build." }], messages: structuredClone(history) });
    const spawn = await waitFor(() => s.records().find((r) => r.ev === "spawn"), 10000);
    assert.deepEqual(spawn.args.slice(spawn.args.indexOf("--project"), spawn.args.indexOf("--project") + 2), ["--project", project], "started with the project's directory");
    const init = await waitFor(() => s.records().find((r) => r.ev === "call" && r.method === "initialize"));
    assert.deepEqual(init.params.config.taskTools, ["subagent"], "default options: v2's delegation tool");
    await waitFor(() => s.records().find((r) => r.ev === "call" && r.method === "agents.update") || (init.params.config.subagents ?? []).length > 0, 5000);
    const first = await host.subagent({ sessionID: PARENT, id: "call_1", input: { agent: "explore", description: "Look around", prompt: "List the files" } });
    assert.equal(first.status, "completed");
    const second = await host.subagent({ sessionID: PARENT, id: "call_2", input: { agent: "general", description: "Summarise the README", prompt: "Summarise README.md" } });
    assert.equal(second.status, "completed");

    // Turn 2: the next draft lists both, with aliases and v2's argument.
    history.push(user("msg_u2", "Continue the exploration"));
    const turn2 = await host.context({ sessionID: PARENT, agent: "build", system: [{ type: "text", text: "You are build." }], messages: structuredClone(history) });
    const block = blockOf(turn2);
    assert.ok(block, JSON.stringify(turn2.messages.at(-1)));
    assert.match(block, /- explore: exp-1 Look around/);
    assert.match(block, /- general: gen-1 Summarise the README/);
    assert.match(block, /as sessionID only/);

    // The alias as sessionID reaches the tool as the child's id: the same child continues.
    const resumed = await host.subagent({ sessionID: PARENT, id: "call_3", input: { agent: "explore", description: "Look again", prompt: "Check again", sessionID: "exp-1" } });
    assert.equal(resumed.status, "completed", resumed.text);
    assert.equal(host.toolInputs.at(-1).sessionID, first.sessionID);
    assert.deepEqual(host.children.get(first.sessionID).prompts, ["List the files", "Check again"]);

    // An unknown agent: the failed call's error gets guidance naming v2's call and the stock subagents.
    const unknown = await host.subagent({ sessionID: PARENT, id: "call_4", input: { agent: "nonexistent", description: "Bad", prompt: "Do it" } });
    assert.equal(unknown.status, "error");
    assert.ok(unknown.draft.error instanceof ToolError, "still a Tool.Error");
    assert.ok(unknown.text.startsWith("Unknown agent: nonexistent\n[hookwire retry guidance]"), unknown.text);
    assert.match(unknown.text, /Available: explore, general/);
    assert.match(unknown.text, /Example: subagent\(agent="explore"/);
    const sent = s.records().find((r) => r.ev === "call" && r.method === "tool.execute.after" && r.params?.input?.callID === "call_4");
    assert.equal(sent.params.input.status, "error", "a failed call goes to the sidecar as failed, never as completed");

    // Turn 3: a background child gets its alias from the notice and is listed as running.
    history.push(user("msg_u3", "Start a background exploration"));
    const bg = await host.subagent({ sessionID: PARENT, id: "call_5", input: { agent: "explore", description: "Watch the tests", prompt: "Run the tests", background: true } });
    assert.equal(bg.status, "running");
    const turn3 = await host.context({ sessionID: PARENT, agent: "build", messages: structuredClone(history) });
    assert.match(blockOf(turn3), /- explore: exp-2 Watch the tests/);
    const runOf = (child) => {
      const out = execFileSync(binary, ["sessions", "--project", project, "--json"], { encoding: "utf8", env: { ...process.env, XDG_STATE_HOME: join(s.dir, "xdg-state") } });
      return JSON.parse(out).sessions.find((e) => e.taskId === child)?.run?.state;
    };
    assert.equal(runOf(bg.sessionID), "running");
    // v2's completion notice (subagent-completion.ts): the child is completed.
    host.emit({
      type: "session.synthetic",
      data: {
        sessionID: PARENT,
        description: "Watch the tests",
        text: `<subagent sessionID="${bg.sessionID}" state="completed" description="Watch the tests">\nall green\n</subagent>`,
        metadata: { source: "subagent", childID: bg.sessionID, agent: "explore", state: "completed" },
      },
    });
    await waitFor(() => runOf(bg.sessionID) === "completed", 5000);
    const listed = await waitFor(async () => {
      await host.context({ sessionID: PARENT, agent: "build", messages: structuredClone(history) });
      return s.records().findLast((r) => r.ev === "reply" && r.method === "chat.messages.transform");
    });
    assert.ok(listed);

    // The parent is deleted ({data: {sessionID}}): its aliases are forgotten.
    host.emit({ type: "session.deleted", data: { sessionID: PARENT }, durable: { aggregateID: PARENT, seq: 9, version: 2 } });
    const inspected = await waitFor(() => s.records().find((r) => r.ev === "inspect" && r.after === "session.deleted"), 5000);
    assert.equal(inspected.event.properties.info.id, PARENT);
    assert.deepEqual(inspected.status.result.store, { ...inspected.status.result.store, parents: 0, entries: 0, trackedSessions: 0 });
    const later = await host.toolBefore({ tool: "subagent", sessionID: PARENT, id: "call_6", input: { agent: "explore", description: "x", prompt: "y", sessionID: "exp-1" } });
    assert.equal(later.input.sessionID, "exp-1", "no longer rewritten: the parent and its aliases are forgotten");

    assert.equal(s.records().filter((r) => r.ev === "spawn").length, 1, "one sidecar, never restarted");
    assert.equal(sidecars(binary).length, 1);
  } finally {
    await host.unload();
    if (process.env.KEEP) console.log(s.dir);
  }
  await waitFor(() => sidecars(binary).length === 0, 5000);
  assert.deepEqual(host.disposed.sort(), ["session:context", "session:retry", "tool:execute.after", "tool:execute.before"]);
  s.cleanup();
});

test("subagents on OpenCode 2 (PROTOCOL.md 4.10): a call's child is recorded done; a background child's execution, steps and retry reach the records with their cost and model, and the parent's total", async () => {
  const s = scratch();
  const project = join(s.dir, "project");
  const host = new V2Host({ options: optionsOf(s), directory: project });
  const binary = realSidecar();
  const subagentsOf = () => {
    const out = execFileSync(binary, ["sessions", "--project", project, "--json"], { encoding: "utf8", env: { ...process.env, XDG_STATE_HOME: join(s.dir, "xdg-state") } });
    return JSON.parse(out).subagents.find((p) => p.parent.sessionID === PARENT);
  };
  const rowOf = (page, id) => page?.subagents.find((r) => r.sessionID === id);
  try {
    await host.load(shimDir);
    await host.context({ sessionID: PARENT, agent: "build", system: [{ type: "text", text: "You are build." }], messages: [user("msg_u1", "Look around")] });
    await waitFor(() => s.records().find((r) => r.ev === "call" && r.method === "initialize"), 10000);
    const first = await host.subagent({ sessionID: PARENT, id: "call_1", input: { agent: "explore", description: "Look around", prompt: "List the files" } });
    assert.equal(first.status, "completed");
    let page = await waitFor(() => rowOf(subagentsOf(), first.sessionID) && subagentsOf(), 5000);
    const done = rowOf(page, first.sessionID);
    assert.equal(done.state, "done", "a finished call's child, recorded from the call (no session.created reached the sidecar)");
    assert.equal(done.alias, "exp-1");
    assert.equal(done.label, "Look around");

    const bg = await host.subagent({ sessionID: PARENT, id: "call_2", input: { agent: "general", description: "Watch the tests", prompt: "Run them", background: true } });
    assert.equal(bg.status, "running");
    // session-event.ts @ 03130971: Execution.Started, Step.Started {assistantMessageID, agent, model}, Step.Ended {cost, tokens}, RetryScheduled {attempt, at, error}.
    host.emit({ type: "session.execution.started", data: { sessionID: bg.sessionID } });
    host.emit({ type: "session.step.started", data: { sessionID: bg.sessionID, assistantMessageID: "msg_s1", agent: "general", model: { id: "fake-model-2", providerID: "fake" } } });
    host.emit({ type: "session.step.ended", data: { sessionID: bg.sessionID, assistantMessageID: "msg_s1", finish: "tool-calls", cost: 0.25, tokens: { input: 100, output: 10, reasoning: 0, cache: { read: 300, write: 0 } } } });
    host.emit({ type: "session.retry.scheduled", data: { sessionID: bg.sessionID, assistantMessageID: "msg_s2", attempt: 2, at: 1795993567000, error: { type: "provider.rate-limit", message: "Rate limit reached", status: 429 } } });
    page = await waitFor(() => {
      const p = subagentsOf();
      return rowOf(p, bg.sessionID)?.state === "retrying" && p;
    }, 5000);
    const row = rowOf(page, bg.sessionID);
    assert.equal(row.retry.attempt, 2);
    assert.equal(row.model, "fake/fake-model-2", "the step's model");
    assert.equal(row.cost, 0.25);
    assert.deepEqual(row.tokens, { input: 100, output: 10, reasoning: 0, cacheRead: 300, cacheWrite: 0 });
    assert.equal(page.parent.total.cost, page.parent.own.cost + 0.25, "the parent's total: its own and its subagents'");
    assert.equal(page.parent.running, 1);
    host.emit({ type: "session.execution.succeeded", data: { sessionID: bg.sessionID } });
    await waitFor(() => rowOf(subagentsOf(), bg.sessionID)?.state === "done", 5000);
  } finally {
    await host.unload();
    s.cleanup();
  }
});

test("a service serving two projects: one sidecar per project, each with its directory, each stopped by its cleanup", async () => {
  const s = scratch();
  const binary = realSidecar();
  const a = new V2Host({ options: optionsOf(s), directory: join(s.dir, "a") });
  const b = new V2Host({ options: optionsOf(s), directory: join(s.dir, "b") });
  const again = new V2Host({ options: optionsOf(s), directory: join(s.dir, "a") });
  try {
    await a.load(shimDir);
    await b.load(shimDir);
    await again.load(shimDir);
    const spawns = await waitFor(() => (s.records().filter((r) => r.ev === "spawn").length >= 2 ? s.records().filter((r) => r.ev === "spawn") : undefined), 10000);
    assert.equal(spawns.length, 2, "a second setup for project a shares a's sidecar");
    const projects = spawns.map((r) => r.args[r.args.indexOf("--project") + 1]).sort();
    assert.deepEqual(projects, [join(s.dir, "a"), join(s.dir, "b")]);
    await a.unload();
    assert.equal(sidecars(binary).length, 2, "a's sidecar still serves the other setup of a");
    await again.unload();
    await waitFor(() => sidecars(binary).length === 1, 5000);
    await b.unload();
    await waitFor(() => sidecars(binary).length === 0, 5000);
  } finally {
    s.cleanup();
  }
});

test("a restarted process's first request has the block: messages are bridged before the system prompt", async () => {
  const s = scratch();
  const opts = optionsOf(s, { cacheStable: false, managedAgents: ["build"] });
  const first = new V2Host({ options: opts, directory: join(s.dir, "p") });
  await first.load(shimDir);
  await first.context({ sessionID: PARENT, agent: "build", messages: [user("msg_u1", "go")] });
  await first.subagent({ sessionID: PARENT, id: "call_1", input: { agent: "explore", description: "Look around", prompt: "List" } });
  // The user's last turn there was with an agent hookwire does not manage.
  await first.context({ sessionID: PARENT, agent: "docs", messages: [user("msg_u1", "go"), user("msg_u2", "write docs")] });
  await first.unload();
  // A new process: a new instance, the state file the first one wrote.
  const second = new V2Host({ options: opts, directory: join(s.dir, "p") });
  try {
    await second.load(shimDir);
    // Back to build: this request's messages say so, and they must reach the sidecar before the system prompt does.
    const d = await second.context({ sessionID: PARENT, agent: "build", system: [{ type: "text", text: "You are build." }], messages: [user("msg_u1", "go"), user("msg_u2", "write docs"), user("msg_u3", "more")] });
    const block = d.system.map((p) => p.text).find((t) => t.includes("### Resumable Sessions"));
    assert.ok(block, `the first request after the restart lacks the block: ${JSON.stringify(d.system)}`);
    assert.match(block, /exp-1 Look around/);
  } finally {
    await second.unload();
    s.cleanup();
  }
});

test("a file part stays where it was when the sidecar adds text to its message", async () => {
  const s = scratch();
  const host = new V2Host({ options: optionsOf(s, { cacheStable: false, state: false, primaryAgents: ["orchestrator"] }), directory: join(s.dir, "p") });
  try {
    await host.load(shimDir);
    const media = { type: "media", mediaType: "image/png", data: "iVBORw0KGgo=" };
    const d = await host.context({
      sessionID: PARENT,
      agent: "orchestrator",
      messages: [{ id: "msg_u1", role: "user", content: [media, { type: "text", text: "What is in this picture?" }] }],
    });
    const types = d.messages[0].content.map((c) => c.type);
    assert.equal(types[0], "media", `the file part moved: ${JSON.stringify(types)}`);
    assert.equal(d.messages[0].content[1].text, "What is in this picture?");
    assert.ok(types.length === 3 && /<internal_reminder>/.test(d.messages[0].content[2].text), "the reminder was added after the text");
  } finally {
    await host.unload();
    s.cleanup();
  }
});

test("v2 events as 1.x's: session.deleted keeps its session, a step's end is an assistant message's usage", async () => {
  const { toV1Event } = await import(pathToFileURL(join(shimDir, "dist", "v2.js")).href);
  assert.deepEqual(toV1Event({ id: "e1", type: "session.deleted", data: { sessionID: "ses_1" } }).event, {
    id: "e1",
    type: "session.deleted",
    properties: { sessionID: "ses_1", info: { id: "ses_1" } },
  });
  // session-event.ts @ 03130971: Step.Ended {sessionID, assistantMessageID, finish, cost, tokens}.
  const tokens = { input: 1200, output: 40, reasoning: 0, cache: { read: 1000, write: 200 } };
  const ended = toV1Event({ id: "e2", type: "session.step.ended", data: { sessionID: "ses_1", assistantMessageID: "msg_a1", finish: "stop", cost: 0, tokens } });
  assert.deepEqual(ended.event, {
    id: "e2", type: "message.updated", properties: { info: { id: "msg_a1", sessionID: "ses_1", role: "assistant", tokens, cost: 0, time: { completed: ended.event.properties.info.time.completed } } },
  });
});

test("v2 events as 1.x's for the subagents (PROTOCOL.md 4.10): execution, retry, steps with their model and cost, creation with its parent", async () => {
  const { toV1Event, StepModels } = await import(pathToFileURL(join(shimDir, "dist", "v2.js")).href);
  const models = new StepModels();
  const v1 = (type, data, created = 1795993563894) => toV1Event({ id: "e", type, created, data }, models).event;
  // session-event.ts @ 03130971: Execution.*, RetryScheduled, Step.*, ModelSelected; session-error.ts: {type, message, status?}.
  assert.deepEqual(v1("session.created", { sessionID: "ses_c", parentID: "ses_p", title: "Find the tests (@explore subagent)" }), {
    id: "e", type: "session.created",
    properties: { sessionID: "ses_c", info: { id: "ses_c", parentID: "ses_p", title: "Find the tests (@explore subagent)", time: { created: 1795993563894 } } },
  });
  assert.deepEqual(v1("session.execution.started", { sessionID: "ses_c" }), { id: "e", type: "session.status", properties: { sessionID: "ses_c", status: { type: "busy" } } });
  assert.deepEqual(v1("session.retry.scheduled", { sessionID: "ses_c", assistantMessageID: "msg_1", attempt: 2, at: 1795993567000, error: { type: "provider.rate-limit", message: "Rate limit reached", status: 429 } }),
    { id: "e", type: "session.status", properties: { sessionID: "ses_c", status: { type: "retry", attempt: 2, message: "Rate limit reached", next: 1795993567000 } } });
  v1("session.model.selected", { sessionID: "ses_c", model: { id: "m-session", providerID: "fake" } });
  v1("session.step.started", { sessionID: "ses_c", assistantMessageID: "msg_1", agent: "explore", model: { id: "m-step", providerID: "fake" } });
  const tokens = { input: 10, output: 2, reasoning: 0, cache: { read: 5, write: 0 } };
  assert.deepEqual(v1("session.step.ended", { sessionID: "ses_c", assistantMessageID: "msg_1", finish: "stop", cost: 0.25, tokens }).properties.info,
    { id: "msg_1", sessionID: "ses_c", role: "assistant", tokens, providerID: "fake", modelID: "m-step", cost: 0.25, time: { completed: 1795993563894 } });
  assert.equal(v1("session.step.ended", { sessionID: "ses_c", assistantMessageID: "msg_2", cost: 0, tokens }).properties.info.modelID, "m-session", "a step without a start: the session's model");
  assert.deepEqual(v1("session.step.failed", { sessionID: "ses_c", assistantMessageID: "msg_3", error: { type: "provider.rate-limit", message: "slow down", status: 429 } }).properties.info.error,
    { name: "provider.rate-limit", data: { message: "slow down", statusCode: 429 } });
  assert.deepEqual(v1("session.execution.succeeded", { sessionID: "ses_c" }), { id: "e", type: "session.idle", properties: { sessionID: "ses_c" } });
  assert.deepEqual(v1("session.execution.failed", { sessionID: "ses_c", error: { type: "provider.server", message: "Bad gateway", status: 502 } }).properties.error,
    { name: "provider.server", data: { message: "Bad gateway", statusCode: 502 } });
  assert.equal(v1("session.execution.interrupted", { sessionID: "ses_c", reason: "user" }).properties.error.name, "MessageAbortedError");
});

test("model choice on OpenCode 2: agentModels picks the subagent call's model input; an explicit model is kept; a child failed on a rate limit cools its model and the next call gets the fallback", async () => {
  const s = scratch();
  const agentModels = { explore: { model: "fake/fake-model-2", fallbackModels: ["fake/fake-model-3"] } };
  const host = new V2Host({ options: optionsOf(s, { agentModels }), directory: join(s.dir, "project") });
  try {
    await host.load(shimDir);
    await host.context({ sessionID: PARENT, agent: "build", system: [{ type: "text", text: "You are build." }], messages: [user("msg_u1", "Look around")] });
    // The provider list comes from ctx.model (model.list, model.default).
    const update = await waitFor(() => s.records().find((r) => r.ev === "notify" && r.method === "providers.update"), 10000);
    assert.deepEqual(update.params.availableModels, ["fake/fake-model", "fake/fake-model-2", "fake/fake-model-3"]);
    assert.equal(update.params.defaultModel, "fake/fake-model");

    const first = await host.subagent({ sessionID: PARENT, id: "call_m1", input: { agent: "explore", description: "Look around", prompt: "List the files" } });
    assert.equal(first.status, "completed", first.text);
    assert.equal(host.toolInputs.at(-1).model, "fake/fake-model-2", "the explore entry's model reaches the tool");
    // general has no entry: v2 chooses (no model input).
    await host.subagent({ sessionID: PARENT, id: "call_m2", input: { agent: "general", description: "Sum up", prompt: "Summarise" } });
    assert.equal("model" in host.toolInputs.at(-1), false);
    // The model's own model (the user asked for it) is kept.
    await host.subagent({ sessionID: PARENT, id: "call_m3", input: { agent: "explore", description: "On 3", prompt: "Again", model: "fake/fake-model#" + "" } }).catch(() => {});
    assert.equal(host.toolInputs.at(-1).model, "fake/fake-model#", "an explicit model input is not replaced, even one v2 refuses");
    await host.subagent({ sessionID: PARENT, id: "call_m4", input: { agent: "explore", description: "On 1", prompt: "Again", model: "fake/fake-model" } });
    assert.equal(host.toolInputs.at(-1).model, "fake/fake-model");

    // The child on fake-model-2 fails on a rate limit: v2 fails the call; that model cools.
    host.failChild = (child, input) => (input.model === "fake/fake-model-2" ? "Rate limit reached for fake-model-2 (429)" : undefined);
    const failed = await host.subagent({ sessionID: PARENT, id: "call_m5", input: { agent: "explore", description: "Dig in", prompt: "Read src" } });
    assert.equal(failed.status, "error");
    assert.match(failed.text, /^Subagent failed \(sessionID: ses_\w+\): Rate limit reached/);
    assert.equal(host.toolInputs.at(-1).model, "fake/fake-model-2");
    // The next explore call skips the cooling model.
    const next = await host.subagent({ sessionID: PARENT, id: "call_m6", input: { agent: "explore", description: "Dig in", prompt: "Read src again" } });
    assert.equal(next.status, "completed", next.text);
    assert.equal(host.toolInputs.at(-1).model, "fake/fake-model-3", "the cooling model is skipped: the entry's fallback");
  } finally {
    await host.unload();
  }
});

test("OpenCode 2's model list as the provider list: enabled models by provider, a {data} answer unwrapped, the default model; the server entry exports nothing else", async () => {
  const { providersOfV2 } = await import(pathToFileURL(join(shimDir, "dist", "v2.js")).href);
  const models = { data: [
    { id: "m1", providerID: "p", enabled: true },
    { id: "m2", providerID: "p", enabled: false },
    { id: "x", providerID: "q" },
    { id: 3, providerID: "q" },
    null,
  ] };
  assert.deepEqual(providersOfV2(models, { data: { providerID: "p", id: "m1" } }), {
    providers: [{ id: "p", models: { m1: {} } }, { id: "q", models: { x: {} } }],
    defaultModel: "p/m1",
  });
  assert.deepEqual(providersOfV2(undefined, null), { providers: [] });
  const server = await import(pathToFileURL(join(shimDir, "dist", "server.js")).href);
  assert.deepEqual(Object.keys(server), ["default"], "1.x loaders may call every exported function");
});
