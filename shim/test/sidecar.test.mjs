// The shim against the real hookwire sidecar (HOOKWIRE_BIN, ../bin/hookwire,
// or one built from the repo): patches land in OpenCode's own objects, the
// slim history is what goes over the wire, and a killed sidecar comes back.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { createHookwire } from "../dist/plugin.js";
import { alive, fakeClient, fixture, realSidecar, scratch, waitFor } from "./helpers.mjs";

const PARENT = "ses_parent000000000000000001";
const CHILD = "ses_child0000000000000000001";
let h, s, logs;

before(async () => {
  s = scratch();
  const fc = fakeClient({ agents: [{ name: "explorer", mode: "subagent" }, { name: "oracle", mode: "subagent" }, { name: "orchestrator", mode: "primary" }] });
  logs = fc.logs;
  // Generous deadlines: these tests are about behaviour, not speed, and CI machines are shared.
  // cacheStable off: these tests follow PROTOCOL.md 4.2/4.3 (block in the system array, phase reminder).
  h = createHookwire({ client: fc.client }, { binary: realSidecar(), trace: s.trace, logFile: s.log, timeoutMs: 2000, transformTimeoutMs: 4000, cacheStable: false }, {
    ...process.env,
    HOME: s.dir,
    XDG_STATE_HOME: `${s.dir}/state`,
  });
  await waitFor(() => h.sidecar.state === "ready", 10_000);
});

after(async () => {
  const pid = h.sidecar.pid;
  await h.dispose();
  await waitFor(() => !alive(pid), 3000);
  s.cleanup();
});

const userMessage = { id: "msg_u1", role: "user", sessionID: PARENT, agent: "orchestrator" };

async function delegate(callID, args, resultId) {
  const input = { tool: "task", sessionID: PARENT, callID };
  const out = { args: { ...args } };
  await h.hooks["tool.execute.before"](input, out);
  await h.hooks["tool.execute.after"](
    { ...input, args: out.args },
    { title: args.description, metadata: {}, output: `<task id="${resultId}" state="completed">\n<task_result>\nok\n</task_result>\n</task>` },
  );
  return out;
}

test("other tools' calls stay off the pipe: only the task tools the sidecar names are forwarded", async () => {
  assert.deepEqual(h.sidecar.capabilities.taskTools, ["task"]);
  const calls = () => s.records().filter((r) => r.ev === "call" && r.method.startsWith("tool.execute.")).length;
  const before = calls();
  const big = "x".repeat(1 << 20);
  await h.hooks["tool.execute.before"]({ tool: "read", sessionID: PARENT, callID: "r1" }, { args: { filePath: "/a" } });
  await h.hooks["tool.execute.after"]({ tool: "read", sessionID: PARENT, callID: "r1" }, { title: "", metadata: {}, output: big });
  assert.equal(calls(), before, "a read's 1 MB output was not sent");
  await h.hooks["tool.execute.after"]({ tool: "Task", sessionID: PARENT, callID: "t0" }, { title: "", metadata: {}, output: "ok" });
  assert.equal(calls(), before + 1, "a task tool (any case) is still sent");
});

test("initialize carries the subagents and primary agents read from OpenCode", () => {
  const init = s.records().find((r) => r.ev === "call" && r.method === "initialize");
  assert.deepEqual(init.params.config, { cacheStable: false, subagents: ["explorer", "oracle"], primaryAgents: ["orchestrator"] });
  assert.equal(h.sidecar.capabilities.hooks.includes("chat.messages.transform"), true);
});

test("resumable sessions: block appended to OpenCode's system array, alias rewritten in OpenCode's args object", async () => {
  await h.hooks["chat.message"]({ sessionID: PARENT, agent: "orchestrator" }, { message: userMessage, parts: [{ type: "text", text: "hi" }] });
  await delegate("call_1", { description: "Explore the repo", prompt: "List files.", subagent_type: "explorer" }, CHILD);

  const system = ["You are the orchestrator."];
  const sysOut = { system };
  await h.hooks["experimental.chat.system.transform"]({ sessionID: PARENT, model: {} }, sysOut);
  assert.equal(sysOut.system, system, "same array");
  assert.equal(system.length, 2);
  assert.match(system[1], /^### Resumable Sessions\n/);
  assert.match(system[1], /- explorer: exp-1 Explore the repo/);

  const args = { description: "Resume", prompt: "Again.", subagent_type: "explorer", task_id: "exp-1" };
  const out = { args };
  await h.hooks["tool.execute.before"]({ tool: "task", sessionID: PARENT, callID: "call_2" }, out);
  assert.equal(out.args, args, "same args object");
  assert.equal(args.task_id, CHILD);
});

test("messages.transform: the slim history goes over the wire, the patch lands in the real messages", async () => {
  const { output } = fixture("messages-transform.json");
  const messages = output.messages;
  const errorPart = messages.flatMap((m) => m.parts).find((p) => p.state?.status === "error" && p.state.error.startsWith("Unknown agent type"));
  const lastUser = messages.filter((m) => m.info.role === "user").at(-1);
  const userParts = lastUser.parts.length;
  const sizeBefore = JSON.stringify(output).length;
  await h.hooks["experimental.chat.messages.transform"]({}, output);
  assert.equal(output.messages, messages, "same messages array");
  assert.match(errorPart.state.error, /^Unknown agent type: nonexistent is not a valid agent type\n[\s\S]*unknown_agent[\s\S]*Available: explorer, oracle/);
  assert.equal(lastUser.parts.length, userParts + 1);
  assert.deepEqual(Object.keys(lastUser.parts.at(-1)).sort(), ["synthetic", "text", "type"]);
  assert.match(lastUser.parts.at(-1).text, /<internal_reminder>/);
  assert.ok(JSON.stringify(output).length > sizeBefore);
  const call = s.records().findLast((r) => r.ev === "call" && r.method === "chat.messages.transform");
  const sent = JSON.stringify(call.params);
  assert.ok(!sent.includes("task_result") && !sent.includes("metadata"), "tool outputs and metadata stay in OpenCode");
  assert.equal(call.params.output.messages.length, messages.length);
});

test("tool.execute.after: a delegate error text gets guidance appended in OpenCode's output object", async () => {
  const output = { title: "t", metadata: {}, output: "[ERROR] Unknown agent: nonexistent. Available agents: explorer, oracle" };
  await h.hooks["tool.execute.after"]({ tool: "task", sessionID: PARENT, callID: "call_x", args: {} }, output);
  assert.match(output.output, /^\[ERROR\] Unknown agent: nonexistent\. Available agents: explorer, oracle\n[\s\S]*unknown_agent/);
});

test("session.deleted is forwarded and the sidecar forgets the parent (seen through the trace)", async () => {
  const event = { id: "evt_1", type: "session.deleted", properties: { sessionID: PARENT, info: { id: PARENT } } };
  await h.hooks.event({ event: { id: "evt_0", type: "message.part.delta", properties: {} } });
  await h.hooks.event({ event });
  const inspect = await waitFor(() => s.records().find((r) => r.ev === "inspect" && r.after === "session.deleted"));
  assert.equal(inspect.sessions.ok, true);
  assert.deepEqual(inspect.sessions.result.filter((e) => JSON.stringify(e).includes(PARENT)), []);
  assert.ok(!s.records().some((r) => r.ev === "notify" && r.params?.input?.event?.type === "message.part.delta"), "unwanted events stay in OpenCode");
  const before = s.records().find((r) => r.ev === "inspect" && r.after === "initialize");
  assert.ok(before.status.ok && typeof before.status.result === "object");
});

test("crash and restart: kill the sidecar mid-run, the next call is served by a new one", async () => {
  const victim = h.sidecar.pid;
  process.kill(victim, "SIGKILL");
  await waitFor(() => h.sidecar.pid !== victim && h.sidecar.state === "ready", 5000);
  assert.equal(alive(victim), false);
  await h.hooks["chat.message"]({ sessionID: PARENT, agent: "orchestrator" }, { message: userMessage, parts: [] });
  await delegate("call_9", { description: "After restart", prompt: "p", subagent_type: "oracle" }, "ses_oracle1");
  const sysOut = { system: [] };
  await h.hooks["experimental.chat.system.transform"]({ sessionID: PARENT, model: {} }, sysOut);
  assert.match(sysOut.system[0] ?? "", /- oracle: ora-1 After restart/);
  const restarted = s.records().filter((r) => r.ev === "spawn");
  assert.equal(restarted.length, 2);
  assert.ok(logs.some((l) => l.message.includes("restarting")));
});

test("the sidecar's pid is in the trace, for tools that need to stop it", () => {
  const spawns = s.records().filter((r) => r.ev === "spawn");
  assert.equal(spawns.at(-1).pid, h.sidecar.pid);
});

test("a typo in the config: the real sidecar runs and its warning reaches OpenCode's log once, and a toast", async () => {
  const fc = fakeClient();
  const typo = createHookwire({ client: fc.client }, { binary: realSidecar(), logFile: null, state: false, subagents: [], cachestable: true }, process.env);
  try {
    await waitFor(() => typo.sidecar.state === "ready", 10_000);
    const warning = await waitFor(() => fc.logs.find((l) => l.message.includes("config warnings")));
    assert.equal(warning.level, "warn");
    assert.match(warning.message, /cachestable.*cacheStable/);
    assert.equal(fc.toasts.length, 1);
    assert.equal(fc.toasts[0].variant, "warning");
    assert.match(fc.toasts[0].message, /^config warnings: .*did you mean "cacheStable"/);
  } finally {
    await typo.dispose();
  }
});

/** A stock OpenCode: primary agents build and plan, subagents explore and general; agents() answers after agentsAfterMs. */
const STOCK_AGENTS = [
  { name: "build", mode: "primary" },
  { name: "plan", mode: "primary" },
  { name: "general", mode: "subagent" },
  { name: "explore", mode: "subagent" },
  { name: "title", mode: "primary", hidden: true },
];

test("OpenCode's agents after initialize: agents.update reaches the real sidecar; build's sessions are managed and guidance lists the subagents; a restart keeps them", async () => {
  const fc = fakeClient({ agents: STOCK_AGENTS, agentsAfterMs: 400 });
  const ls = scratch();
  const waits = { initialMs: 50, retryAfterMs: 10_000, retryPauseMs: 100, maxCalls: 3, totalMs: 30_000 };
  const late = createHookwire({ client: fc.client }, { binary: realSidecar(), logFile: null, state: false, trace: ls.trace, timeoutMs: 2000, transformTimeoutMs: 4000 }, process.env, { agentWaits: waits });
  try {
    await waitFor(() => late.sidecar.state === "ready", 10_000);
    const init = ls.records().find((r) => r.ev === "call" && r.method === "initialize");
    assert.deepEqual(init.params.config, {}, "initialize did not wait for the slow agents call");
    const update = await waitFor(() => ls.records().find((r) => r.ev === "notify" && r.method === "agents.update"), 5000);
    assert.deepEqual(update.params, { primaryAgents: ["build", "plan"], subagents: ["general", "explore"] });
    assert.equal(fc.agentCalls(), 1);

    // build is managed now: its task gets an alias, and the Resumable Sessions block (cache-stable: in its next user message).
    const P = "ses_build00000000000000000001";
    await late.hooks["chat.message"]({ sessionID: P, agent: "build" }, { message: { id: "msg_b1", role: "user", sessionID: P, agent: "build" }, parts: [{ type: "text", text: "hi" }] });
    const input = { tool: "task", sessionID: P, callID: "call_b1" };
    const args = { description: "Look around", prompt: "p", subagent_type: "explore" };
    await late.hooks["tool.execute.before"](input, { args });
    await late.hooks["tool.execute.after"]({ ...input, args }, { title: "", metadata: {}, output: '<task id="ses_exp1" state="completed">\n<task_result>\nok\n</task_result>\n</task>' });
    const list = await late.sidecar.request("sessions.list", { sessionID: P }, 4000);
    assert.deepEqual(list.result.map((e) => [e.agent, e.alias]), [["explore", "exp-1"]]);
    const messages = [
      { info: { id: "msg_b1", role: "user", sessionID: P, agent: "build" }, parts: [{ type: "text", text: "hi" }] },
      { info: { id: "msg_b2", role: "user", sessionID: P, agent: "build" }, parts: [{ type: "text", text: "again" }] },
    ];
    await late.hooks["experimental.chat.messages.transform"]({}, { messages });
    const added = messages[1].parts.slice(1).map((p) => p.text).join("\n");
    assert.match(added, /### Resumable Sessions[\s\S]*- explore: exp-1 Look around/);
    assert.ok(!added.includes("<internal_reminder>"), "no phase reminder for build");

    // Guidance for an unknown subagent_type lists OpenCode's subagents, learned late.
    const err = { output: "[ERROR] Unknown agent: nonexistent" };
    await late.hooks["tool.execute.after"]({ tool: "task", sessionID: P, callID: "call_b2", args: {} }, err);
    assert.match(err.output, /Available: general, explore/);

    // A restarted sidecar gets the lists in initialize.
    const victim = late.sidecar.pid;
    process.kill(victim, "SIGKILL");
    await waitFor(() => late.sidecar.pid !== victim && late.sidecar.state === "ready", 5000);
    const inits = ls.records().filter((r) => r.ev === "call" && r.method === "initialize");
    assert.equal(inits.length, 2);
    assert.deepEqual(inits[1].params.config, { subagents: ["general", "explore"], primaryAgents: ["build", "plan"] });
    assert.equal(ls.records().filter((r) => r.ev === "notify" && r.method === "agents.update").length, 1, "no update needed after the restart");
    const status = await late.sidecar.request("status", {}, 4000);
    assert.equal(status.ok, true);
  } finally {
    await late.dispose();
    ls.cleanup();
  }
});
