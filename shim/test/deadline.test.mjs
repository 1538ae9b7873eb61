// The fail-open windows on a mocked clock (node:test's mock timers) with the
// sidecar as a child in memory (the spawn seam): the verdicts depend on
// timer order only, never on how busy the machine is. failopen.test.mjs
// checks the same windows with real processes, with generous bounds.
import assert from "node:assert/strict";
import { afterEach, beforeEach, mock, test } from "node:test";
import { forwardHook } from "../dist/forward.js";
import { Logger } from "../dist/log.js";
import { createHookwire } from "../dist/plugin.js";
import { Sidecar } from "../dist/sidecar.js";
import { fakeClient, fakeSpawner, flushIO, healthyAnswer } from "./helpers.mjs";

beforeEach(() => mock.timers.enable({ apis: ["setTimeout", "setImmediate", "Date"], now: 0 }));
afterEach(() => mock.timers.reset());

/** Moves the mocked clock by ms, then lets the I/O and promise chains that follow run. */
async function advance(ms) {
  mock.timers.tick(ms);
  for (let i = 0; i < 5; i++) {
    await flushIO();
    mock.timers.tick(0);
  }
}

/** Resolves a promise's state without waiting: the value, or "pending". */
function track(p) {
  const t = { value: "pending" };
  p.then((v) => (t.value = v));
  return t;
}

function start(spawner, opts = {}) {
  const fc = fakeClient();
  const s = new Sidecar({
    binary: "hookwire",
    args: [],
    initParams: async () => ({ protocolVersion: 1, clientInfo: { name: "test", version: "0" }, config: {} }),
    log: new Logger(fc.client),
    spawn: spawner.spawn,
    ...opts,
  });
  s.start();
  return { s, logs: fc.logs };
}

/** Answers initialize; hook calls of the methods in silent get no answer (kept in child.unanswered). */
function silentOn(...silent) {
  return (msg, child) => {
    if (silent.includes(msg.method)) {
      (child.unanswered ??= []).push(msg);
      return undefined;
    }
    return healthyAnswer(msg);
  };
}

const beforeOutput = () => ({ args: { description: "d", prompt: "p", subagent_type: "explorer", task_id: "exp-1" } });
const taskInput = { tool: "task", sessionID: "ses_parent", callID: "call_1" };
const deadlines = { timeoutMs: 250, transformTimeoutMs: 2000 };

test("a call to a silent sidecar resolves with timeout at its deadline, not a tick before", async () => {
  const spawner = fakeSpawner(silentOn("tool.execute.before"));
  const { s } = start(spawner);
  await advance(0);
  assert.equal(s.state, "ready");
  const call = track(s.request("tool.execute.before", { input: {}, output: {} }, 250));
  await advance(249);
  assert.equal(call.value, "pending");
  await advance(1);
  assert.deepEqual(call.value, { ok: false, reason: "timeout", detail: "tool.execute.before took over 250 ms" });
  await s.dispose(0);
});

test("forwardHook: a tool hook passes through at timeoutMs, a transform at transformTimeoutMs; late patches are never applied", async () => {
  const spawner = fakeSpawner(silentOn("tool.execute.before", "chat.system.transform"));
  const { s, logs } = start(spawner);
  await advance(0);
  const ctx = { sidecar: s, deadlines, log: new Logger(fakeClient().client) };

  const out = beforeOutput();
  const hook = track(forwardHook(ctx, "tool.execute.before", taskInput, out));
  await advance(249);
  assert.equal(hook.value, "pending");
  await advance(1);
  assert.equal(hook.value, undefined, "resolved at 250 ms");
  const sys = { system: ["s"] };
  const transform = track(forwardHook(ctx, "chat.system.transform", { sessionID: "ses_parent" }, sys));
  await advance(1999);
  assert.equal(transform.value, "pending");
  await advance(1);
  assert.equal(transform.value, undefined, "resolved at 2000 ms");

  // The sidecar answers both now, after their deadlines.
  const [late, lateSys] = spawner.children[0].unanswered;
  spawner.children[0].reply({ id: late.id, result: { patch: [{ op: "replace", path: "/args/task_id", value: "ses_late" }] } });
  spawner.children[0].reply({ id: lateSys.id, result: { patch: [{ op: "add", path: "/system/-", value: "late" }] } });
  await advance(10);
  assert.deepEqual(out, beforeOutput());
  assert.deepEqual(sys, { system: ["s"] });
  assert.equal(logs.length, 0, "the sidecar's own logger saw nothing; the hook logs through ctx");
  await s.dispose(0);
});

test("forwardHook: a reply within the deadline is applied", async () => {
  const spawner = fakeSpawner(silentOn("tool.execute.before"));
  const { s } = start(spawner);
  await advance(0);
  const out = beforeOutput();
  const hook = track(forwardHook({ sidecar: s, deadlines, log: new Logger(undefined) }, "tool.execute.before", taskInput, out));
  await advance(249);
  const [call] = spawner.children[0].unanswered;
  spawner.children[0].reply({ id: call.id, result: { patch: [{ op: "replace", path: "/args/task_id", value: "ses_child" }] } });
  await advance(0);
  assert.equal(hook.value, undefined);
  assert.equal(out.args.task_id, "ses_child");
  await s.dispose(0);
});

test("a sidecar that never answers initialize: hooks pass through at their deadline, logged once per hook", async () => {
  const spawner = fakeSpawner(silentOn("initialize"));
  const fc = fakeClient();
  const h = createHookwire({ client: fc.client }, { binary: "hookwire", logFile: null, state: false, subagents: [], timeoutMs: 150, transformTimeoutMs: 300 }, {}, { spawn: spawner.spawn });
  await advance(0);
  assert.equal(h.sidecar.state, "starting");
  for (let round = 0; round < 2; round++) {
    const out = beforeOutput();
    const hook = track(h.hooks["tool.execute.before"](taskInput, out));
    await advance(149);
    assert.equal(hook.value, "pending");
    await advance(1);
    assert.equal(hook.value, undefined);
    assert.deepEqual(out, beforeOutput());
  }
  const sys = { system: ["s"] };
  const transform = track(h.hooks["experimental.chat.system.transform"]({ sessionID: "ses_parent" }, sys));
  await advance(299);
  assert.equal(transform.value, "pending");
  await advance(1);
  assert.equal(transform.value, undefined);
  const notReady = fc.logs.filter((l) => l.message.includes("not ready"));
  assert.deepEqual(notReady.map((l) => [l.level, /tool\.execute\.before|chat\.system\.transform/.exec(l.message)[0]]), [
    ["warn", "tool.execute.before"],
    ["warn", "chat.system.transform"],
  ]);
  const dispose = h.dispose();
  await advance(1000);
  await dispose;
});

test("a sidecar that exits at once: respawned after 100, 200, 400, 800 ms; given up after the fifth exit", async () => {
  const spawner = fakeSpawner(healthyAnswer, (child) => process.nextTick(() => child.exit(3)));
  const { s, logs } = start(spawner);
  await advance(0);
  for (let i = 0; i < 20 && s.state !== "failed"; i++) await advance(100);
  assert.equal(s.state, "failed");
  assert.deepEqual(spawner.spawnTimes, [0, 100, 300, 700, 1500]);
  assert.equal(logs.filter((l) => l.message.includes("not restarting")).length, 1);
  // Given up: a call fails at once, without waiting its deadline.
  const call = track(s.request("status", {}, 250));
  await advance(0);
  assert.deepEqual(call.value, { ok: false, reason: "not-ready", detail: "failed" });
});
