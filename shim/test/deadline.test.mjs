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

test("a call made while the sidecar starts: the wait for initialize counts in its deadline", async () => {
  const spawner = fakeSpawner(silentOn("initialize", "tool.execute.before"));
  const { s } = start(spawner);
  await advance(0);
  assert.equal(s.state, "starting");
  const call = track(s.request("tool.execute.before", { input: {}, output: {} }, 250));
  await advance(100);
  const child = spawner.children[0];
  const [init] = child.unanswered;
  child.reply({ id: init.id, ...healthyAnswer(init) });
  await advance(0);
  assert.equal(s.state, "ready");
  assert.equal(call.value, "pending");
  assert.ok(child.received.some((m) => m.method === "tool.execute.before"), "sent once ready");
  await advance(149);
  assert.equal(call.value, "pending");
  await advance(1);
  assert.deepEqual(call.value, { ok: false, reason: "timeout", detail: "tool.execute.before took over 150 ms" }, "at 250 ms from the call");
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

test("a sidecar given up on: hooks pass through at once, with no time passing", async () => {
  const spawner = fakeSpawner(healthyAnswer, (child) => process.nextTick(() => child.exit(3)));
  const fc = fakeClient();
  const h = createHookwire({ client: fc.client }, { binary: "hookwire", logFile: null, state: false, subagents: [], timeoutMs: 150, transformTimeoutMs: 300 }, {}, { spawn: spawner.spawn });
  await advance(0);
  for (let i = 0; i < 20 && h.sidecar.state !== "failed"; i++) await advance(100);
  assert.equal(h.sidecar.state, "failed");
  const out = beforeOutput();
  const hook = track(h.hooks["tool.execute.before"](taskInput, out));
  const sys = { system: ["s"] };
  const transform = track(h.hooks["experimental.chat.system.transform"]({ sessionID: "ses_parent" }, sys));
  await advance(0);
  assert.equal(hook.value, undefined, "resolved before the clock moved");
  assert.equal(transform.value, undefined);
  assert.deepEqual(out, beforeOutput());
  assert.deepEqual(sys, { system: ["s"] });
  await h.dispose();
});

test("dispose: a child that never answers initialize nor reads exit is killed at the grace period", async () => {
  const spawner = fakeSpawner(silentOn("initialize"));
  const { s } = start(spawner);
  await advance(0);
  const child = spawner.children[0];
  child.stop();
  const disposed = track(s.dispose(1000));
  await advance(999);
  assert.equal(disposed.value, "pending");
  assert.deepEqual(child.signals, []);
  await advance(1);
  assert.equal(disposed.value, undefined);
  assert.deepEqual(child.signals, ["SIGKILL"]);
});

test("dispose: a ready child that stops reading gets shutdown's 500 ms, then the grace period, then SIGKILL", async () => {
  const spawner = fakeSpawner();
  const { s } = start(spawner);
  await advance(0);
  assert.equal(s.state, "ready");
  const child = spawner.children[0];
  child.stop();
  const disposed = track(s.dispose(1000));
  await advance(500); // shutdown's deadline: exit is sent, the grace period starts
  assert.equal(disposed.value, "pending");
  await advance(999);
  assert.equal(disposed.value, "pending");
  assert.deepEqual(child.signals, []);
  await advance(1);
  assert.equal(disposed.value, undefined);
  assert.deepEqual(child.signals, ["SIGKILL"]);
});

test("dispose: a child that reads exit is not killed", async () => {
  const spawner = fakeSpawner();
  const { s } = start(spawner);
  await advance(0);
  const child = spawner.children[0];
  const disposed = track(s.dispose(1000));
  await advance(0);
  assert.equal(disposed.value, undefined, "shutdown answered, exit read: gone before any timer");
  assert.deepEqual(child.received.map((m) => m.method).slice(-2), ["shutdown", "exit"]);
  assert.deepEqual(child.signals, []);
  assert.equal(child.exitCode, 0);
});

// ---- A hung sidecar (issue 9) -------------------------------------------

test("three deadline misses in a row with nothing read: the child is killed (SIGKILL) and restarted; no stale call reaches the new one", async () => {
  const spawner = fakeSpawner();
  const { s, logs } = start(spawner);
  await advance(0);
  const first = spawner.children[0];
  first.stop();
  const calls = [1, 2, 3].map((n) => track(s.request("tool.execute.before", { n }, 250)));
  assert.equal(s.pendingCalls, 3);
  assert.ok(s.inFlightBytes > 0, "the stopped child read nothing");
  await advance(250);
  for (const c of calls) assert.equal(c.value.reason, "timeout");
  assert.deepEqual(first.signals, ["SIGKILL"]);
  assert.equal(s.state, "backoff");
  assert.equal(s.pendingCalls, 0);
  assert.equal(s.inFlightBytes, 0, "the old stdin buffer is dropped with the child");
  assert.equal(logs.filter((l) => l.message.includes("hung")).length, 1);
  // A call made while it restarts waits for the new child and is answered.
  const next = track(s.request("tool.execute.before", { n: 4 }, 250));
  await advance(100);
  assert.equal(spawner.children.length, 2);
  assert.deepEqual(next.value, { ok: true, result: { patch: [] } });
  const second = spawner.children[1];
  assert.deepEqual(second.received.map((m) => m.params?.n ?? m.method), ["initialize", 4], "only initialize and the new call");
  first.cont(); // a continued old child changes nothing
  assert.equal(s.pid, second.pid);
});

test("a line from the child between misses resets the count: a slow sidecar that still answers is not killed", async () => {
  const spawner = fakeSpawner(silentOn("tool.execute.before"));
  const { s } = start(spawner, { hungAfterMisses: 3 });
  await advance(0);
  const child = spawner.children[0];
  const miss = async () => {
    const c = track(s.request("tool.execute.before", {}, 250));
    await advance(250);
    assert.equal(c.value.reason, "timeout");
  };
  await miss();
  await miss();
  // The late answer to the first call: dropped, but the child is alive.
  child.reply({ id: child.unanswered[0].id, result: { patch: [] } });
  await advance(0);
  await miss();
  await miss();
  assert.deepEqual(child.signals, []);
  assert.equal(s.state, "ready");
  await miss();
  assert.deepEqual(child.signals, ["SIGKILL"], "the third miss in a row since the last line");
});

test("hungAfterMisses 0: a silent child is never killed, and the timed-out calls still leave the pending map", async () => {
  const spawner = fakeSpawner(silentOn("tool.execute.before"));
  const { s } = start(spawner, { hungAfterMisses: 0 });
  await advance(0);
  for (let i = 0; i < 10; i++) track(s.request("tool.execute.before", {}, 250));
  assert.equal(s.pendingCalls, 10);
  await advance(250);
  assert.equal(s.pendingCalls, 0);
  assert.deepEqual(spawner.children[0].signals, []);
  assert.equal(s.state, "ready");
});

test("bytes in flight: 200 x 1 MB transforms against a stopped child never hold more than maxInFlightBytes; the rest fail open unwritten", async () => {
  const spawner = fakeSpawner();
  const max = 8 * 1024 * 1024;
  const { s } = start(spawner, { hungAfterMisses: 0 });
  await advance(0);
  const child = spawner.children[0];
  child.stop();
  const big = "x".repeat(1 << 20);
  let peak = 0;
  const calls = [];
  for (let i = 0; i < 200; i++) {
    calls.push(track(s.request("chat.system.transform", { input: {}, output: { system: [big] } }, 2000)));
    peak = Math.max(peak, s.inFlightBytes);
  }
  await advance(0);
  assert.ok(peak <= max, `peak ${peak}`);
  const overloaded = calls.filter((c) => c.value !== "pending" && c.value.reason === "overloaded");
  assert.equal(overloaded.length, 200 - 7, "seven 1 MB messages fit in 8 MiB");
  assert.equal(s.pendingCalls, 7);
  await advance(2000);
  assert.ok(calls.every((c) => c.value !== "pending"));
  assert.equal(s.pendingCalls, 0);
  // Continued: the child reads the backlog it was sent, and nothing more.
  child.cont();
  await advance(0);
  assert.equal(child.received.filter((m) => m.method === "chat.system.transform").length, 7);
  assert.equal(s.inFlightBytes, 0);
  const after = track(s.request("tool.execute.before", {}, 250));
  await advance(0);
  assert.deepEqual(after.value, { ok: true, result: { patch: [] } });
});
