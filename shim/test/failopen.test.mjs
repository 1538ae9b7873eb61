// The shim against sidecars that misbehave (fixtures/fake-sidecar.mjs) or are
// missing: every hook returns, leaves output untouched, never throws, and
// says so once in OpenCode's log. How long each waits (its deadline, the
// backoff, dispose's grace period, passing through at once) is checked on
// a mocked clock in deadline.test.mjs; nothing here reads the wall clock
// for its verdict, so a busy machine changes no outcome.
import assert from "node:assert/strict";
import { after, test } from "node:test";
import { HOOKS } from "../dist/contract.gen.js";
import { createHookwire } from "../dist/plugin.js";
import { alive, fakeClient, fakeSidecar, scratch, sleep, waitFor } from "./helpers.mjs";

const instances = [];
after(async () => {
  for (const h of instances) await h.dispose();
});

const clients = new WeakMap();
const clientOf = (h) => clients.get(h);

function start(mode, { env = {}, options = {}, client } = {}) {
  const s = scratch();
  const fc = client ?? fakeClient();
  const h = createHookwire(
    { client: fc.client },
    { binary: fakeSidecar, args: [mode], trace: s.trace, logFile: s.log, subagents: [], ...options },
    { ...process.env, ...env },
  );
  instances.push(h);
  clients.set(h, fc);
  return { h, s, logs: fc.logs, toasts: fc.toasts };
}

const beforeOutput = () => ({ args: { description: "d", prompt: "p", subagent_type: "explorer", task_id: "exp-1" } });
const taskInput = { tool: "task", sessionID: "ses_parent", callID: "call_1" };

test("a sidecar that never answers: each hook passes through, output untouched", async () => {
  const { h, logs } = start("hang", { options: { timeoutMs: 150, transformTimeoutMs: 300 } });
  const out = beforeOutput();
  await h.hooks["tool.execute.before"](taskInput, out);
  assert.deepEqual(out, beforeOutput());
  const sys = { system: ["s"] };
  await h.hooks["experimental.chat.system.transform"]({ sessionID: "ses_parent" }, sys);
  assert.deepEqual(sys, { system: ["s"] });
  assert.equal(h.sidecar.state, "starting", "still waiting for initialize");
  // A second hook after the first: logged once per kind, not once per call.
  await h.hooks["tool.execute.before"](taskInput, out);
  const notReady = logs.filter((l) => l.message.includes("not ready") && l.message.includes("tool.execute.before"));
  assert.equal(notReady.length, 1);
  assert.equal(notReady[0].level, "warn");
});

test("a sidecar that answers too late: the late patch is never applied", async () => {
  const patch = [{ op: "replace", path: "/args/task_id", value: "ses_late" }];
  const { h, s } = start("slow", { env: { FAKE_PATCH: JSON.stringify(patch), FAKE_DELAY_MS: "300" }, options: { timeoutMs: 100 } });
  await waitFor(() => h.sidecar.state === "ready");
  const out = beforeOutput();
  await h.hooks["tool.execute.before"](taskInput, out);
  assert.equal(out.args.task_id, "exp-1");
  assert.ok(s.records().some((r) => r.ev === "reply" && r.method === "tool.execute.before" && r.reason === "timeout"));
  // The fake answers in order, each after the same delay: once status is
  // answered, the hook's late reply has been read before it.
  const status = await h.sidecar.request("status", null, 30_000);
  assert.equal(status.ok, true, JSON.stringify(status));
  assert.equal(out.args.task_id, "exp-1", "the reply that came after the deadline changed nothing");
  assert.equal(h.sidecar.state, "ready", "a late reply is no fault");
});

test("a sidecar that exits at once: restarts with backoff, gives up after 5 crashes, says so once", async () => {
  const { h, s, logs } = start("exit", { options: { timeoutMs: 100 } });
  await waitFor(() => h.sidecar.state === "failed", 60_000); // five node starts: slow on a loaded machine
  const spawns = s.records().filter((r) => r.ev === "spawn");
  assert.equal(spawns.length, 5);
  // Each spawn follows the previous child's exit (the waits between, 100
  // ms doubling, are checked on a mocked clock in deadline.test.mjs).
  const order = s.records().filter((r) => r.ev === "spawn" || r.ev === "exit").map((r) => r.ev);
  assert.deepEqual(order, ["spawn", "exit", "spawn", "exit", "spawn", "exit", "spawn", "exit", "spawn", "exit"]);
  assert.equal(logs.filter((l) => l.message.includes("not restarting")).length, 1);
  const toasts = clientOf(h).toasts;
  assert.equal(toasts.length, 1, "given up: one toast");
  assert.equal(toasts[0].variant, "error");
  assert.match(toasts[0].message, /^sidecar stopped 5 times within 60 s .*not restarting/);
  // Given up: hooks pass through (at once: deadline.test.mjs) and spawn nothing.
  const out = beforeOutput();
  await h.hooks["tool.execute.before"](taskInput, out);
  assert.deepEqual(out, beforeOutput());
  assert.equal(s.records().filter((r) => r.ev === "spawn").length, 5);
  for (const r of spawns) assert.equal(alive(r.pid), false);
});

test("a missing binary: one clear warning in the log and a toast, hooks pass through", async () => {
  const fc = fakeClient();
  const h = createHookwire({ client: fc.client }, { binary: "/nonexistent/hookwire" }, { ...process.env });
  instances.push(h);
  assert.equal(h.sidecar, undefined);
  assert.equal(fc.logs.length, 1);
  assert.match(fc.logs[0].message, /binary not found.*\/nonexistent\/hookwire.*pass through/);
  assert.equal(fc.toasts.length, 1);
  assert.deepEqual(Object.keys(fc.toasts[0]).sort(), ["message", "title", "variant"]);
  assert.equal(fc.toasts[0].title, "hookwire");
  assert.equal(fc.toasts[0].variant, "warning");
  assert.match(fc.toasts[0].message, /^sidecar binary not found via the plugin option "binary" \(\/nonexistent\/hookwire\)/);
  assert.equal(h.hooks["tool.execute.before"], undefined);

  // Nothing configured and nothing on PATH.
  const fc2 = fakeClient();
  const h2 = createHookwire({ client: fc2.client }, {}, { PATH: "/nonexistent", HOME: "/nonexistent" });
  instances.push(h2);
  assert.match(fc2.logs[0].message, /"hookwire" on PATH/);
});

test("HOOKWIRE_BIN and PATH find the binary; the option wins over both", () => {
  const viaEnv = createHookwire({}, { logFile: null }, { ...process.env, HOOKWIRE_BIN: fakeSidecar });
  instances.push(viaEnv);
  assert.equal(viaEnv.settings.binary, fakeSidecar);
  assert.equal(viaEnv.settings.binarySource, "env");
  const viaOption = createHookwire({}, { binary: fakeSidecar, logFile: null }, { ...process.env, HOOKWIRE_BIN: "/nope" });
  instances.push(viaOption);
  assert.equal(viaOption.settings.binarySource, "option");
});

test("initialize rejected (e.g. a typo in the config): logged once, hooks pass through at once", async () => {
  const { h, logs } = start("reject", { options: { bogus: 1 } });
  await waitFor(() => h.sidecar.state === "failed", 30_000);
  assert.equal(logs.filter((l) => l.message.includes("initialize rejected")).length, 1);
  assert.deepEqual(clientOf(h).toasts.map((t) => t.variant), ["error"]);
  const out = beforeOutput();
  await h.hooks["tool.execute.before"](taskInput, out);
  assert.deepEqual(out, beforeOutput());
});

test("initialize warnings (a typo in the config) are logged once at warn; the sidecar runs", async () => {
  const warnings = ['config.cachestable: unknown member, ignored (did you mean "cacheStable"?)', "config.maxSessionsPerAgent: must be an integer; default kept"];
  const { h, logs } = start("ok", { env: { FAKE_WARNINGS: JSON.stringify(warnings) } });
  await waitFor(() => h.sidecar.state === "ready", 30_000);
  const logged = logs.filter((l) => l.message.includes("config warnings"));
  assert.equal(logged.length, 1);
  assert.equal(logged[0].level, "warn");
  assert.equal(logged[0].message, `hookwire: config warnings: ${warnings.join("; ")}`);
  assert.deepEqual(clientOf(h).toasts, [{ title: "hookwire", message: `config warnings: ${warnings.join("; ")}`, variant: "warning" }]);
  // A restarted sidecar with the same config does not say it again.
  const victim = h.sidecar.pid;
  process.kill(victim, "SIGKILL");
  await waitFor(() => h.sidecar.state === "ready" && h.sidecar.pid !== victim, 30_000);
  assert.equal(logs.filter((l) => l.message.includes("config warnings")).length, 1);
  assert.equal(clientOf(h).toasts.length, 1, "nor show it again");

  const quiet = start("ok");
  await waitFor(() => quiet.h.sidecar.state === "ready", 30_000);
  assert.equal(quiet.logs.filter((l) => l.message.includes("config warnings")).length, 0);
  assert.equal(quiet.toasts.length, 0, "no problem, no toast");
});

test("shim-only options are stripped from the config; subagents come from OpenCode's agents", async () => {
  const fc = fakeClient({
    agents: [
      { name: "explorer", mode: "subagent" },
      { name: "oracle", mode: "all" },
      { name: "build", mode: "primary" },
      { name: "secret", mode: "subagent", hidden: true },
    ],
  });
  const s = scratch();
  const h = createHookwire(
    { client: fc.client },
    { binary: fakeSidecar, args: ["ok"], timeoutMs: 100, transformTimeoutMs: 100, trace: s.trace, logFile: s.log, cacheStable: true },
    process.env,
  );
  instances.push(h);
  await waitFor(() => h.sidecar.state === "ready");
  const init = s.records().find((r) => r.ev === "call" && r.method === "initialize");
  assert.deepEqual(init.params, {
    protocolVersion: 1,
    clientInfo: { name: "hookwire-opencode", version: init.params.clientInfo.version },
    config: { cacheStable: true, subagents: ["explorer", "oracle"], primaryAgents: ["oracle", "build"] },
  });
  assert.match(init.params.clientInfo.version, /^\d+\.\d+\.\d+/);
});

test("a patch that does not apply leaves output untouched and is logged once", async () => {
  const patch = [
    { op: "replace", path: "/args/task_id", value: "ses_1" },
    { op: "remove", path: "/args/nope" },
  ];
  const { h, logs } = start("ok", { env: { FAKE_PATCH: JSON.stringify(patch) }, options: { timeoutMs: 2000 } });
  const out = beforeOutput();
  await h.hooks["tool.execute.before"](taskInput, out);
  await h.hooks["tool.execute.before"](taskInput, out);
  assert.deepEqual(out, beforeOutput());
  assert.equal(logs.filter((l) => l.message.includes("patch not applied")).length, 1);
});

test("never throws: bad inputs and outputs, broken log client", async () => {
  const { h } = start("ok", {
    env: { FAKE_PATCH: JSON.stringify([{ op: "add", path: "/x", value: 1 }]) },
    options: { timeoutMs: 300, transformTimeoutMs: 300 },
    client: fakeClient({ logThrows: true }),
  });
  const cyclic = { args: {} };
  cyclic.args.self = cyclic;
  const throwing = { get args() { throw new Error("getter"); } };
  const outputs = [null, undefined, 5, "s", [], {}, cyclic, throwing, Object.freeze({}), { args: { n: 10n } }, { messages: null }, { messages: [null, { parts: 5 }] }];
  const inputs = [null, undefined, {}, { tool: 5 }, cyclic, { big: 1n }];
  // Every hook the shim forwards with a patch: the contract's request hooks.
  const hookNames = HOOKS.filter((x) => x.kind === "request").map((x) => x.opencodeHook);
  assert.ok(hookNames.length >= 5);
  for (const name of hookNames)
    for (const input of inputs)
      for (const output of outputs) {
        await h.hooks[name](input, output); // must resolve, never reject
      }
  for (const ev of [null, undefined, {}, { event: null }, { event: { type: 5 } }, { event: { type: "session.deleted", properties: { n: 1n } } }])
    await h.hooks.event(ev);
});

test("dispose stops the sidecar and leaves no process behind", async () => {
  const { h } = start("ok");
  await waitFor(() => h.sidecar.state === "ready");
  const pid = h.sidecar.pid;
  assert.ok(alive(pid));
  await h.dispose();
  await waitFor(() => !alive(pid), 3000);
  const hung = start("hang");
  await waitFor(() => hung.h.sidecar.pid !== undefined);
  const hungPid = hung.h.sidecar.pid;
  assert.ok(alive(hungPid));
  await hung.h.dispose(); // never answers initialize: killed after the grace period (deadline.test.mjs)
  await waitFor(() => !alive(hungPid), 3000);
});

test("the shim's own option warnings: logged once at warn and shown once; the sidecar still runs with the rest", async () => {
  const { h, logs, toasts, s } = start("ok", { options: { timeoutMs: "fast", tiemoutMs: 5, cacheStable: false } });
  await waitFor(() => h.sidecar.state === "ready");
  assert.equal(h.settings.timeoutMs, 250);
  const logged = logs.filter((l) => l.message.includes("plugin option warnings"));
  assert.equal(logged.length, 1);
  assert.equal(logged[0].level, "warn");
  assert.deepEqual(logged[0].extra.warnings, ['tiemoutMs: unknown option, ignored (did you mean "timeoutMs"?)', 'timeoutMs must be a number of milliseconds above 0, got "fast"; using the default 250']);
  assert.equal(toasts.length, 1);
  assert.match(toasts[0].message, /^plugin option warnings: tiemoutMs: unknown option.*; timeoutMs must be /);
  const init = s.records().find((r) => r.ev === "call" && r.method === "initialize");
  assert.equal(init.params.config.cacheStable, false);
  assert.equal("tiemoutMs" in init.params.config, false);
});

test("a toast that throws or rejects never reaches OpenCode; the log entry is still written", async () => {
  for (const toastFails of ["throw", "reject"]) {
    const fc = fakeClient({ toastFails });
    const h = createHookwire({ client: fc.client }, { binary: "/nonexistent/hookwire", timeoutMs: "x" }, { ...process.env });
    instances.push(h);
    assert.equal(fc.logs.length, 2, toastFails);
    assert.equal(fc.toasts.length, toastFails === "throw" ? 0 : 2);
    await sleep(10); // a rejection would surface as unhandled here
  }
  // A client without tui at all.
  const noTui = { app: { log: () => {} } };
  const h = createHookwire({ client: noTui }, { binary: "/nonexistent/hookwire" }, { ...process.env });
  instances.push(h);
  assert.equal(h.sidecar, undefined);
});

test("the sidecar's own notifications: cache.bust is shown as a toast once per session; one the contract does not name is dropped", async () => {
  const lastBust = { message: "msg_3", tokensLost: 900, cause: "system", byHookwire: false, detail: "system prompt changed by another plugin or OpenCode" };
  const bust = (session, n) => ({ method: "cache.bust", params: { session, requests: 3, cacheShare: 0.5, busts: n, bustsInARow: n, lastBust } });
  const notes = [{ method: "not.in.the.contract", params: { session: "ses_z", lastBust } }, bust("ses_a", 2), bust("ses_a", 3), bust("ses_b", 2)];
  const { h, s, toasts } = start("ok", { env: { FAKE_NOTIFY: JSON.stringify(notes) } });
  await waitFor(() => h.sidecar.state === "ready", 5000);
  await waitFor(() => toasts.filter((t) => /prompt cache missed/.test(t.message)).length >= 2, 5000);
  await h.sidecar.request("status", {}, 2000); // after the notifications on the same pipe
  const shown = toasts.filter((t) => /prompt cache missed/.test(t.message)).map((t) => t.message);
  assert.deepEqual(shown, [
    "prompt cache missed 2 times in a row in session ses_a: system prompt changed by another plugin or OpenCode",
    "prompt cache missed 2 times in a row in session ses_b: system prompt changed by another plugin or OpenCode",
  ]);
  assert.deepEqual(s.records().filter((r) => r.ev === "notification").map((r) => r.method), ["cache.bust", "cache.bust", "cache.bust"]);
});
