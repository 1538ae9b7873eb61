// The named parts createHookwire wires together, each on its own: the
// sidecar's arguments, initialize params, the event queue.
import assert from "node:assert/strict";
import { statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, test } from "node:test";
import { EventForwarder, deadlineOf } from "../dist/forward.js";
import { Logger } from "../dist/log.js";
import { sidecarArgs } from "../dist/statefile.js";
import { InitParams } from "../dist/subagents.js";
import { fakeClient, scratch } from "./helpers.mjs";

const scratches = [];
after(() => scratches.forEach((s) => s.cleanup()));

test("sidecarArgs: --state FILE after the user's args, its directory created 0700; none when it cannot be created", () => {
  const s = scratch();
  scratches.push(s);
  const fc = fakeClient();
  const file = join(s.dir, "state", "hookwire", "p.json");
  assert.deepEqual(sidecarArgs({ args: ["--log-level", "debug"], state: file }, new Logger(fc.client)), ["--log-level", "debug", "--state", file]);
  assert.equal(statSync(join(s.dir, "state", "hookwire")).mode & 0o777, 0o700);
  assert.deepEqual(sidecarArgs({ args: ["-x"], state: null }, new Logger(fc.client)), ["-x"]);
  assert.equal(fc.logs.length, 0);

  // A file where the directory should be: mkdir fails, even for root.
  const notDir = join(s.dir, "file");
  writeFileSync(notDir, "");
  const args = sidecarArgs({ args: [], state: join(notDir, "sub", "p.json") }, new Logger(fc.client));
  assert.deepEqual(args, []);
  assert.equal(fc.logs.length, 1);
  assert.match(fc.logs[0].message, /cannot create the state directory.*memory only/);
});

test("InitParams: the user's subagents win; else OpenCode's agents (asked once); else the config hook's", async () => {
  let asked = 0;
  const agents = (list) => ({ app: { agents: async () => (asked++, { data: list }) } });
  const given = await new InitParams({ subagents: ["a"], cacheStable: true }, agents([{ name: "x", mode: "subagent" }]), "1.2.3").build();
  assert.deepEqual(given, { protocolVersion: 1, clientInfo: { name: "hookwire-opencode", version: "1.2.3" }, config: { subagents: ["a"], cacheStable: true } });
  assert.equal(asked, 0);

  const fromAgents = new InitParams({}, agents([{ name: "x", mode: "subagent" }, { name: "p", mode: "primary" }, { name: "h", mode: "all", hidden: true }]), "0");
  assert.deepEqual((await fromAgents.build()).config, { subagents: ["x"] });
  assert.deepEqual((await fromAgents.build()).config, { subagents: ["x"] }, "a respawn reuses the answer");
  assert.equal(asked, 1);

  const broken = new InitParams({}, { app: { agents: async () => { throw new Error("no"); } } }, "0");
  broken.onConfig({ agent: { y: { mode: "all" }, off: { mode: "subagent", disable: true }, b: { mode: "primary" } } });
  assert.deepEqual((await broken.build()).config, { subagents: ["y"] }, "the agents call failed: the config's");
  broken.onConfig(null);
  assert.deepEqual((await broken.build()).config, {}, "a later config without agents");
  broken.onConfig({ agent: { y: { mode: "all" }, off: { mode: "subagent", disable: true } } });
  assert.deepEqual((await broken.build()).config, { subagents: ["y"] });
});

test("deadlineOf: the transforms get transformTimeoutMs, every other hook timeoutMs", () => {
  const d = { timeoutMs: 1, transformTimeoutMs: 2 };
  assert.equal(deadlineOf("chat.system.transform", d), 2);
  assert.equal(deadlineOf("chat.messages.transform", d), 2);
  for (const m of ["tool.execute.before", "tool.execute.after", "chat.message"]) assert.equal(deadlineOf(m, d), 1);
});

/** A stand-in for Sidecar with the surface EventForwarder uses. */
function stubSidecar() {
  const sent = [];
  const ready = [];
  const whenReadyCalls = [];
  const s = {
    state: "starting",
    sent,
    whenReadyCalls,
    whenReady: (ms) => (whenReadyCalls.push(ms), new Promise((r) => ready.push(r))),
    wantsEvent: (type) => s.state === "ready" && type === "session.deleted",
    notify: (method, params) => (sent.push({ method, params }), true),
    becomeReady() {
      s.state = "ready";
      for (const r of ready) r(true);
    },
  };
  return s;
}

test("EventForwarder: early events wait for initialize, only wanted types go out, the queue is bounded", async () => {
  const s = stubSidecar();
  const deleted = [];
  const events = new EventForwarder(s, new Logger(undefined), { waitMs: 1234, maxWaiting: 2, afterDelete: async (e) => void deleted.push(e.type) });
  const a = events.onEvent({ event: { type: "session.deleted", properties: { n: 1 } } });
  const b = events.onEvent({ event: { type: "message.part.delta" } });
  const c = events.onEvent({ event: { type: "session.deleted", properties: { n: 3 } } }); // third: over maxWaiting, dropped
  await c;
  assert.equal(events.waitingCount, 2);
  assert.deepEqual(s.whenReadyCalls, [1234, 1234]);
  s.becomeReady();
  await Promise.all([a, b]);
  assert.equal(events.waitingCount, 0);
  assert.deepEqual(s.sent, [{ method: "event", params: { input: { event: { type: "session.deleted", properties: { n: 1 } } } } }]);
  assert.deepEqual(deleted, ["session.deleted"]);
  await events.onEvent({ event: { type: 5 } });
  await events.onEvent(undefined);
  assert.equal(s.sent.length, 1);
});

test("hungAfterMisses and maxInFlightBytes: shim options with documented defaults, never sent to the sidecar", async () => {
  const { resolveSettings, DEFAULT_HUNG_AFTER_MISSES, DEFAULT_MAX_IN_FLIGHT_BYTES } = await import("../dist/options.js");
  assert.equal(DEFAULT_HUNG_AFTER_MISSES, 3);
  assert.equal(DEFAULT_MAX_IN_FLIGHT_BYTES, 8 * 1024 * 1024);
  const dflt = resolveSettings({}, {}, {});
  assert.equal(dflt.hungAfterMisses, 3);
  assert.equal(dflt.maxInFlightBytes, 8 * 1024 * 1024);
  const set = resolveSettings({ hungAfterMisses: 0, maxInFlightBytes: 1024, cacheStable: true }, {}, {});
  assert.equal(set.hungAfterMisses, 0, "0 turns hang detection off");
  assert.equal(set.maxInFlightBytes, 1024);
  assert.deepEqual(set.config, { cacheStable: true });
  for (const bad of [-1, 1.5, "3", null]) assert.equal(resolveSettings({ hungAfterMisses: bad }, {}, {}).hungAfterMisses, 3, String(bad));
  for (const bad of [0, -5, "8", Infinity]) assert.equal(resolveSettings({ maxInFlightBytes: bad }, {}, {}).maxInFlightBytes, 8 * 1024 * 1024, String(bad));
});
