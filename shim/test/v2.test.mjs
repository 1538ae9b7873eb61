// OpenCode 2: the package's `./server` entry against the v2 host double
// (v2host.mjs, built to the plugin API at the commit docs/OPENCODE.md
// names) with the real sidecar: the module decodes, setup registers, and
// each bridged hook does what the same hook does on 1.x.
import assert from "node:assert/strict";
import { test } from "node:test";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { decodeDefinition, LoadError, resolveEntry, V2Host } from "./v2host.mjs";
import { realSidecar, scratch, shimDir, waitFor } from "./helpers.mjs";

const PARENT = "ses_parent_v2";
const CHILD = "ses_child_v2";
const taskOutput = (id) => `<task id="${id}" state="completed">\n<task_result>\nfound README.md\n</task_result>\n</task>`;

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

test("setup bridges context, tool and event hooks to the sidecar (aliases, block, reminder, guidance, deletion)", async () => {
  const s = scratch();
  const host = new V2Host({
    options: { binary: realSidecar(), cacheStable: false, subagents: ["explorer", "oracle"], state: false, trace: s.trace, logFile: s.log, timeoutMs: 2000, transformTimeoutMs: 4000 },
  });
  try {
    await host.load(shimDir);
    assert.deepEqual([...host.session.keys()], ["context"]);
    assert.deepEqual([...host.tool.keys()].sort(), ["execute.after", "execute.before"]);

    // The orchestrator's first request: its user message gets the phase reminder.
    const first = await host.context({
      sessionID: PARENT,
      agent: "orchestrator",
      system: [{ type: "text", text: "You are the orchestrator." }],
      messages: [{ id: "msg_u1", role: "user", content: [{ type: "text", text: "Please explore the repo" }] }],
    });
    const texts = first.messages[0].content.filter((c) => c.type === "text").map((c) => c.text);
    assert.equal(texts[0], "Please explore the repo", "the user's own text is untouched");
    assert.match(texts.at(-1), /<internal_reminder>/);

    // A task call: before registers it, after learns the child and its alias.
    const args = { description: "Explore the repo", prompt: "Look around", subagent_type: "explorer" };
    await host.toolBefore({ tool: "task", sessionID: PARENT, id: "call_1", input: { ...args }, agent: "orchestrator" });
    const after = await host.toolAfter({ tool: "task", sessionID: PARENT, id: "call_1", input: args, agent: "orchestrator", result: { content: taskOutput(CHILD) } });
    assert.match(typeof after.result.content === "string" ? after.result.content : "", new RegExp(CHILD));

    // The next request: the system prompt lists exp-1, as a new SystemPart after the original one.
    const second = await host.context({
      sessionID: PARENT,
      agent: "orchestrator",
      system: [{ type: "text", text: "You are the orchestrator.", cache: { type: "ephemeral" } }],
      messages: [{ id: "msg_u1", role: "user", content: [{ type: "text", text: "Please explore the repo" }] }],
    });
    assert.equal(second.system[0].cache?.type, "ephemeral", "an unchanged part is kept as it was");
    const block = second.system.map((p) => p.text).find((t) => t.includes("### Resumable Sessions"));
    assert.ok(block, JSON.stringify(second.system));
    assert.match(block, /- explorer: exp-1 Explore the repo/);

    // Resuming by alias: the draft's input now names the child session.
    const resume = await host.toolBefore({ tool: "task", sessionID: PARENT, id: "call_2", input: { ...args, task_id: "exp-1" }, agent: "orchestrator" });
    assert.equal(resume.input.task_id, CHILD);

    // OpenCode's own error for an unknown agent, in a tool-result: guidance follows it.
    const error = "Unknown agent type: nonexistent is not a valid agent type";
    const third = await host.context({
      sessionID: PARENT,
      agent: "orchestrator",
      messages: [
        { id: "msg_u1", role: "user", content: [{ type: "text", text: "Please explore the repo" }] },
        { id: "msg_a1", role: "assistant", content: [{ type: "tool-call", id: "call_3", name: "task", input: { ...args, subagent_type: "nonexistent" } }] },
        { role: "tool", content: [{ type: "tool-result", id: "call_3", name: "task", result: { type: "error", value: error } }] },
      ],
    });
    const result = third.messages[2].content[0].result;
    assert.equal(result.type, "error");
    assert.ok(result.value.startsWith(error), result.value);
    assert.ok(result.value.length > error.length && /explorer/.test(result.value), `guidance names the agents: ${result.value}`);

    // session.deleted as v2 sends it ({data: {sessionID}}): the sidecar forgets the parent and its aliases.
    host.emit({ type: "session.deleted", data: { sessionID: PARENT }, durable: { aggregateID: PARENT, seq: 9, version: 2 } });
    const inspected = await waitFor(() => s.records().find((r) => r.ev === "inspect" && r.after === "session.deleted"), 5000);
    assert.equal(inspected.event.properties.info.id, PARENT, "1.x's event shape: properties.info.id");
    assert.deepEqual(inspected.status.result.store, { ...inspected.status.result.store, parents: 0, entries: 0, trackedSessions: 0 });
    const later = await host.toolBefore({ tool: "task", sessionID: PARENT, id: "call_4", input: { ...args, task_id: "exp-1" }, agent: "orchestrator" });
    assert.equal(later.input.task_id, "exp-1", "no longer rewritten: the parent is forgotten");
  } finally {
    await host.unload();
    if (process.env.KEEP) console.log(s.dir); else s.cleanup();
  }
  assert.deepEqual(host.disposed.sort(), ["session:context", "tool:execute.after", "tool:execute.before"]);
});
